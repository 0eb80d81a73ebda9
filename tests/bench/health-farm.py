#!/usr/bin/env python3
"""Listener farm of `npm run bench:health --farm defer` (tests/bench/health.ts).

Holds TCP listeners for members [FROM, TO) on 127.0.0.0/8 (address i is 127.(1 + i >> 16).(i >> 8 &
255).(i & 255)), all on one PORT (0: the first listener picks one). An optional BASE ("10.64") moves
them to BASE's first octet, second octet + (i >> 16) (the --netns members, tests/bench/health-netns.ts). Each listener sets
TCP_DEFER_ACCEPT, so a handshake whose client sends no data never creates a connection socket and
never wakes this process: the prober's RST drops the half-open request. The process does nothing
per probe, and on loopback the kernel work of the member side is only the SYN, SYN-ACK and RST
handling (with an accepting listener it also builds, queues, accepts and closes a socket per probe).

Commands on stdin, one per line; replies on stdout as JSON lines:
  close A B   close the listeners of members [A, B) that this process holds   -> {"op": "closed", "at": ms}
  open A B    reopen them                                                     -> {"op": "opened", "at": ms}
  cpu         CPU time used so far (user, system µs)                          -> {"op": "cpu", "usage": {...}}
  exit
"""
import json
import resource
import socket
import sys
import time


BASE = (127, 1)


def ip_of(i):
    return f"{BASE[0]}.{BASE[1] + (i >> 16)}.{(i >> 8) & 255}.{i & 255}"


def listen(i, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, 30)
    s.bind((ip_of(i), port))
    s.listen(511)
    return s


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    global BASE
    first, last, port = (int(a) for a in sys.argv[1:4])
    if len(sys.argv) > 4:
        BASE = tuple(int(x) for x in sys.argv[4].split("."))
    socks = {}
    socks[first] = listen(first, port)
    port = socks[first].getsockname()[1]
    for i in range(first + 1, last):
        socks[i] = listen(i, port)
    send({"op": "ready", "port": port})
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        op = parts[0]
        if op in ("close", "open"):
            a, b = max(int(parts[1]), first), min(int(parts[2]), last)
            for i in range(a, b):
                if op == "close":
                    socks.pop(i).close()
                else:
                    socks[i] = listen(i, port)
            send({"op": "closed" if op == "close" else "opened", "at": int(time.time() * 1000)})
        elif op == "cpu":
            ru = resource.getrusage(resource.RUSAGE_SELF)
            send({"op": "cpu", "usage": {"user": int(ru.ru_utime * 1e6), "system": int(ru.ru_stime * 1e6)}})
        elif op == "exit":
            break


if __name__ == "__main__":
    main()
