#!/usr/bin/env python3
"""Splits a `perf record -g` profile of the health bench's checker by who the work is for.

On loopback the member's kernel work runs inside the prober's system calls (the SYN, SYN-ACK and
RST of every probe are handled in the softirq of the call that sent them), so the checker's CPU
time includes work that a remote member's host would do. This script attributes each sample by
the frames on its stack (first rule that matches, leaf to root order does not matter):

  member: SYN -> SYN-ACK    tcp_conn_request (the listener's request socket, SYN-ACK out)
  member: ACK/RST           tcp_check_req, reqsk drop (the listener side of the handshake's end)
  member: accept queue      inet_csk_complete_hashdance, tcp_child_process (connect mode only)
  listener lookups          inet_lhash2_lookup (inflated here: 100,000 listeners share this kernel)
  prober: RST for SYN-ACK   tcp_v4_send_reset (SYN mode: this host resets the SYN-ACK)
  prober: raw receive       raw_local_deliver, raw_rcv, recvmmsg (SYN mode)
  receive path, all packets the rest of the receive path (IP, TCP lookups) of every packet, the
                            member-bound ones included (SYN and RST: two of three in SYN mode)
  prober: connect/disconnect tcp_v4_connect, tcp_disconnect, ... (connect mode; SYN mode: the
                            UDP connect() of source-address lookups)
  prober: send              raw_sendmsg / sendmmsg (SYN mode)
  prober: other kernel      epoll, timers, scheduling, memory
  user: JavaScript, V8, addon

Usage: perf script -i perf.data -F comm,tid,ip,sym | python3 tests/bench/health-perf-split.py
"""
import sys
from collections import Counter

RULES = [
    ('member: SYN -> SYN-ACK', ('tcp_conn_request',)),
    ('member: ACK/RST', ('tcp_check_req', 'inet_csk_reqsk_queue_drop', 'reqsk_fastopen_remove', '__inet_csk_reqsk_queue_drop')),
    ('member: accept queue', ('inet_csk_complete_hashdance', 'tcp_child_process', 'tcp_v4_syn_recv_sock')),
    ('listener lookups', ('inet_lhash2_lookup',)),
    ('prober: RST for SYN-ACK', ('tcp_v4_send_reset',)),
    ('prober: raw receive', ('raw_local_deliver', 'raw_rcv', 'do_recvmmsg', '__sys_recvmmsg')),
    ('receive path, all packets', ('net_rx_action', 'process_backlog', '__netif_receive_skb_one_core')),
    ('prober: connect/disconnect', ('tcp_v4_connect', 'tcp_disconnect', '__inet_stream_connect', '__sys_connect')),
    ('prober: send', ('raw_sendmsg', '__sys_sendmmsg')),
]


def classify(frames, kernel):
    names = set(frames)
    for label, keys in RULES:
        if any(k in names for k in keys):
            return label
    return 'prober: other kernel' if kernel else 'user: JavaScript, V8, addon'


def main():
    counts = Counter()
    frames = []
    kernel = False
    for line in sys.stdin:
        line = line.rstrip('\n')
        if not line.strip():
            if frames:
                counts[classify(frames, kernel)] += 1
            frames, kernel = [], False
            continue
        if not line.startswith((' ', '\t')):
            frames, kernel = [], False  # a sample header
            continue
        parts = line.split()
        if len(parts) >= 2:
            sym = parts[1].split('+')[0]
            if not frames:
                kernel = '[kernel' in line or sym.startswith(('__x64_', 'entry_SYSCALL')) or (len(parts[0]) == 16 and parts[0].startswith('ffff'))
            frames.append(sym)
    if frames:
        counts[classify(frames, kernel)] += 1
    total = sum(counts.values()) or 1
    order = [r[0] for r in RULES] + ['prober: other kernel', 'user: JavaScript, V8, addon']
    for label in order:
        if counts[label]:
            print(f'{label:32s} {100 * counts[label] / total:5.1f} %')
    print(f'{"samples":32s} {total}')


if __name__ == '__main__':
    main()
