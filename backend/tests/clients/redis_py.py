"""redis-py through pipescope's observing proxy (backend/tests/observe/clients.rs).

    python redis_py.py PORT NAME MODE N [HOST]

MODE is what an application would write: "loop" calls r.set N times; "pipeline" queues N SETs
on r.pipeline(transaction=False) and executes it; "batches" does the same in batches of 100,
each executed before the next is queued; "multi" does the same on r.pipeline(), which wraps
them in MULTI/EXEC; "phases" calls r.set N times, then queues N more SETs on one
r.pipeline(transaction=False) and executes it (a connection that changes behaviour). HOST is
127.0.0.1 unless given.
"""

import sys

import redis

port, name, mode, n = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
host = sys.argv[5] if len(sys.argv) > 5 else "127.0.0.1"
r = redis.Redis(host=host, port=port)
r.client_setname(name)
if mode == "loop":
    for i in range(n):
        r.set(f"py:{name}:{i}", i)
elif mode in ("pipeline", "multi"):
    p = r.pipeline(transaction=mode == "multi")
    for i in range(n):
        p.set(f"py:{name}:{i}", i)
    replies = p.execute()
    assert len(replies) == n and all(replies), replies[:5]
elif mode == "batches":
    for start in range(0, n, 100):
        p = r.pipeline(transaction=False)
        for i in range(start, min(start + 100, n)):
            p.set(f"py:{name}:{i}", i)
        replies = p.execute()
        assert len(replies) == min(100, n - start) and all(replies), replies[:5]
elif mode == "phases":
    for i in range(n):
        r.set(f"py:{name}:{i}", i)
    p = r.pipeline(transaction=False)
    for i in range(n, 2 * n):
        p.set(f"py:{name}:{i}", i)
    replies = p.execute()
    assert len(replies) == n and all(replies), replies[:5]
else:
    sys.exit(f"unknown mode {mode}")
r.close()
