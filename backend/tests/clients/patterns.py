"""Clients whose way of waiting is known by construction, for the observe tests that judge a
client's verdict (and for the strace oracle those tests check it with). Plain sockets, so each
send and each receive is one syscall the tests' strace can see.

    python patterns.py PORT MODE N [WORK_US [HOST]]

N SETs on one connection, each preceded by WORK_US µs of the application's own work (a busy
loop, so it takes CPU as real work does; 0 unless given). HOST is 127.0.0.1 unless given.

MODE
  waits        sends a command, blocks until its reply is read, then the next: one at a time.
  send-all     sends each command with its own send and reads every reply once, at the end.
  nonblocking  sends each command, then reads whatever replies are already back without
               blocking (recv with MSG_DONTWAIT), and blocks once at the end for the rest.
  threads      one thread sends each command as it is issued while another thread reads the
               replies (blocking reads of its own): Lettuce's auto-flush behind Spring's
               executePipelined. The sending thread never waits for a reply.
  phases       N/2 commands one at a time (as waits), then N/2 written in one send and read
               at the end: a connection that changes behaviour.
  get-all      one SET of a value of PATTERNS_VALUE bytes (4096 unless given), its reply read;
               then N GETs of it, each with its own send, every reply read once at the end:
               N values lie unread as the GETs go, and the receive window shrinks.
  get-each     as get-all, but each GET's reply is read before the next GET: one at a time.

Every reply is checked (+OK each); the client exits non-zero if one is wrong or missing.

With PATTERNS_RCVBUF set (bytes), the socket's receive buffer is set that small before it
connects (SO_RCVBUF, which also stops Linux growing it): replies left unread then fill it
after a few, and the receive window the client advertises shrinks. With PATTERNS_MSS, the
segment size its SYN offers (TCP_MAXSEG), as across a network rather than loopback's ~64 KB.
"""

import os
import socket
import sys
import threading
import time

port, mode, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
work = int(sys.argv[4]) / 1e6 if len(sys.argv) > 4 else 0.0
host = sys.argv[5] if len(sys.argv) > 5 else "127.0.0.1"
REPLY = b"+OK\r\n"


def command(i):
    key, value = f"pattern:{mode}:{i}", str(i)
    return f"*3\r\n$3\r\nSET\r\n${len(key)}\r\n{key}\r\n${len(value)}\r\n{value}\r\n".encode()


def own_work():
    if work > 0:
        until = time.perf_counter() + work
        while time.perf_counter() < until:
            pass


def read_replies(s, count, got=b""):
    """Blocking reads until `count` replies are in; returns them."""
    want = len(REPLY) * count
    while len(got) < want:
        piece = s.recv(65536)
        if not piece:
            sys.exit(f"Redis closed after {len(got)} bytes of replies")
        got += piece
    return got


def check(got, count):
    if got != REPLY * count:
        sys.exit(f"wrong replies: {got[:100]!r}")


rcvbuf = int(os.environ.get("PATTERNS_RCVBUF", "0"))
mss = int(os.environ.get("PATTERNS_MSS", "0"))
if rcvbuf > 0 or mss > 0:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf > 0:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    if mss > 0:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, mss)
    s.connect((host, port))
else:
    s = socket.create_connection((host, port))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
commands = [command(i) for i in range(n)]

if mode == "waits":
    for c in commands:
        own_work()
        s.sendall(c)
        check(read_replies(s, 1), 1)
elif mode == "send-all":
    for c in commands:
        own_work()
        s.sendall(c)
    check(read_replies(s, n), n)
elif mode == "nonblocking":
    got = b""
    for c in commands:
        own_work()
        s.sendall(c)
        try:
            got += s.recv(65536, socket.MSG_DONTWAIT)
        except BlockingIOError:
            pass
    check(read_replies(s, n, got), n)
elif mode == "threads":
    replies = []
    reader = threading.Thread(target=lambda: replies.append(read_replies(s, n)))
    reader.start()
    for c in commands:
        own_work()
        s.sendall(c)
    reader.join()
    check(replies[0], n)
elif mode == "phases":
    half = n // 2
    for c in commands[:half]:
        own_work()
        s.sendall(c)
        check(read_replies(s, 1), 1)
    s.sendall(b"".join(commands[half:]))
    check(read_replies(s, n - half), n - half)
elif mode in ("get-all", "get-each"):
    size = int(os.environ.get("PATTERNS_VALUE", "4096"))
    key, value = "pattern:get", b"v" * size
    head = f"*3\r\n$3\r\nSET\r\n${len(key)}\r\n{key}\r\n${size}\r\n".encode()
    s.sendall(head + value + b"\r\n")
    check(read_replies(s, 1), 1)
    get = f"*2\r\n$3\r\nGET\r\n${len(key)}\r\n{key}\r\n".encode()
    reply = f"${size}\r\n".encode() + value + b"\r\n"

    def read_values(count):
        got = b""
        while len(got) < len(reply) * count:
            piece = s.recv(1 << 20)
            if not piece:
                sys.exit(f"Redis closed after {len(got)} bytes of replies")
            got += piece
        if got != reply * count:
            sys.exit(f"wrong replies: {got[:100]!r}")

    for _ in range(n):
        own_work()
        s.sendall(get)
        if mode == "get-each":
            read_values(1)
    if mode == "get-all":
        read_values(n)
else:
    sys.exit(f"unknown mode {mode}")
s.close()
