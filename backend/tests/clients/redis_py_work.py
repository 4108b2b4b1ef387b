"""redis-py with the application's own work between commands, through pipescope's observing
proxy with --probe (backend/tests/observe/probe.rs).

    python redis_py_work.py PORT MODE N WORK_US

N SETs, each preceded by WORK_US µs of the application's own work (a busy loop). MODE: "loop"
calls r.set for each; "batches" queues them on r.pipeline(transaction=False) and executes
every 5, each batch's replies read before the next is queued. Every reply is checked.
"""

import sys
import time

import redis

port, mode, n, work = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) / 1e6
BATCH = 5


def own_work():
    until = time.perf_counter() + work
    while time.perf_counter() < until:
        pass


r = redis.Redis(host="127.0.0.1", port=port)
if mode == "loop":
    for i in range(n):
        own_work()
        assert r.set(f"pywork:{i}", i) is True
elif mode == "batches":
    for start in range(0, n, BATCH):
        p = r.pipeline(transaction=False)
        for i in range(start, min(start + BATCH, n)):
            own_work()
            p.set(f"pywork:{i}", i)
        replies = p.execute()
        assert replies == [True] * min(BATCH, n - start), replies
else:
    sys.exit(f"unknown mode {mode}")
r.close()
