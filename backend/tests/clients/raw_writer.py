"""A client that writes each command in its own send and reads no reply until it has sent them
all (backend/tests/observe/waits.rs): Lettuce's default behind Spring's executePipelined, and a
client on a timer. Plain sockets, so each send is one syscall the test's strace can count.

    python raw_writer.py PORT MODE N [EVERY_US [HOST]]

MODE "each" sends N SETs back to back; "clock" sends one every EVERY_US µs by its own clock
(busy-waiting, so the cadence is steady), slower than a round trip. Then it reads the N
replies and checks them. HOST is 127.0.0.1 unless given.
"""

import socket
import sys
import time

port, mode, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
every = int(sys.argv[4]) / 1e6 if len(sys.argv) > 4 else 0.0
host = sys.argv[5] if len(sys.argv) > 5 else "127.0.0.1"
s = socket.create_connection((host, port))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
commands = []
for i in range(n):
    key, value = f"raw:{mode}:{i}", str(i)
    commands.append(
        f"*3\r\n$3\r\nSET\r\n${len(key)}\r\n{key}\r\n${len(value)}\r\n{value}\r\n".encode()
    )
start = time.perf_counter()
for i, c in enumerate(commands):
    if mode == "clock":
        due = start + i * every
        while time.perf_counter() < due:
            pass
    elif mode != "each":
        sys.exit(f"unknown mode {mode}")
    s.sendall(c)
want = b"+OK\r\n" * n
got = b""
while len(got) < len(want):
    piece = s.recv(65536)
    if not piece:
        sys.exit(f"Redis closed after {len(got)} bytes of replies")
    got += piece
assert got == want, got[:100]
s.close()
