"""A TCP relay that holds what it reads for a while before passing it on: the dialled delay of
backend/tests/observe/network.rs, made apart from pipescope's own delay line.

    python3 relay.py LISTEN_ADDR LISTEN_PORT TARGET_ADDR TARGET_PORT DELAY_US [JITTER_US]

Each connection accepted is joined to a new one to the target. Every chunk read from one side
is written to the other DELAY_US after it was read, in order, in both directions (a reader
stamps it, a writer sleeps until it is due). With JITTER_US, each chunk is held a further
0 to JITTER_US (uniform, the same sequence every run), as a real path varies, never before the
chunk ahead of it. Prints "relaying" once it listens.

With RELAY_LOG set, it appends a line there as each connection ends: the client's port, then
per direction (client to target, then back) the chunks relayed and the µs they went out past
their due time in all (a timer woken late on a busy machine holds them longer than dialled).
"""

import ctypes
import os
import queue
import random
import socket
import sys
import threading
import time

listen_addr, listen_port, target_addr, target_port, delay_us = sys.argv[1:6]
delay = int(delay_us) / 1e6
jitter = int(sys.argv[6]) / 1e6 if len(sys.argv) > 6 else 0.0

# Linux wakes a sleeper up to its timer slack late (50 µs by default), which would add to
# every hold: 1 µs instead, for this thread and those it starts (PR_SET_TIMERSLACK).
try:
    ctypes.CDLL(None, use_errno=True).prctl(29, 1000, 0, 0, 0)
except (AttributeError, OSError):
    pass


def direction(src, dst, done, late):
    """Reads src to its end; dst gets each chunk once due, then the end (a half close).
    late: [chunks, seconds past due], added to as chunks go."""
    due = queue.Queue()

    def writer():
        try:
            while True:
                at, chunk = due.get()
                wait = at - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                if not chunk:
                    dst.shutdown(socket.SHUT_WR)
                    return
                dst.sendall(chunk)
                late[0] += 1
                late[1] += max(0.0, time.monotonic() - at)
        except OSError:
            pass
        finally:
            done.release()

    threading.Thread(target=writer, daemon=True).start()
    varies, last = random.Random(7), 0.0
    try:
        while True:
            chunk = src.recv(65536)
            last = max(last, time.monotonic() + delay + varies.uniform(0, jitter))
            due.put((last, chunk))
            if not chunk:
                return
    except OSError:
        due.put((time.monotonic(), b""))


def join(client, port):
    server = socket.create_connection((target_addr, int(target_port)))
    for s in (client, server):
        # Chunks go on as they come due, not held for earlier ones' ACKs.
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    done = threading.Semaphore(0)
    late = ([0, 0.0], [0, 0.0])
    for (src, dst), l in zip(((client, server), (server, client)), late):
        threading.Thread(target=direction, args=(src, dst, done, l), daemon=True).start()
    # Both directions ended (or failed): the connection is over.
    done.acquire()
    done.acquire()
    client.close()
    server.close()
    log = os.environ.get("RELAY_LOG")
    if log:
        with open(log, "a") as f:
            f.write(f"{port} {late[0][0]} {late[0][1] * 1e6:.0f} {late[1][0]} {late[1][1] * 1e6:.0f}\n")


listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind((listen_addr, int(listen_port)))
listener.listen(128)
print("relaying", flush=True)
while True:
    conn, (_, port) = listener.accept()
    threading.Thread(target=join, args=(conn, port), daemon=True).start()
