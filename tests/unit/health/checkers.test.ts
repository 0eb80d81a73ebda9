import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { bodyContains } from '../../../runtime/health/checkers/http.js';
import { parsePingReplies, pingArgs } from '../../../runtime/health/checkers/icmp.js';

const body = (chunks: string[]) => Readable.from(chunks.map((c) => Buffer.from(c)), { objectMode: false }) as unknown as IncomingMessage;

test('bodyContains: finds a needle split across chunks, stops at the limit', async () => {
  const rows: { name: string; chunks: string[]; needle: string; limit: number; want: boolean }[] = [
    { name: 'in one chunk', chunks: ['hello READY world'], needle: 'READY', limit: 100, want: true },
    { name: 'split over two chunks', chunks: ['xxxRE', 'ADYxx'], needle: 'READY', limit: 100, want: true },
    { name: 'split over three chunks', chunks: ['xR', 'EA', 'DY'], needle: 'READY', limit: 100, want: true },
    { name: 'absent', chunks: ['abc', 'def'], needle: 'READY', limit: 100, want: false },
    { name: 'beyond the limit', chunks: ['0123456789', 'READY'], needle: 'READY', limit: 12, want: false },
    { name: 'ends exactly at the limit', chunks: ['01234', 'READY'], needle: 'READY', limit: 10, want: true },
  ];
  for (const r of rows) assert.equal(await bodyContains(body(r.chunks), Buffer.from(r.needle), r.limit), r.want, r.name);
});

test('ping output: reply times parsed, summary lines ignored', () => {
  const out = `PING 127.0.0.1 (127.0.0.1) 56(84) bytes of data.
64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.352 ms
64 bytes from 127.0.0.1: icmp_seq=3 ttl=64 time=1.50 ms

--- 127.0.0.1 ping statistics ---
3 packets transmitted, 2 received, 33% packet loss, time 406ms
rtt min/avg/max/mdev = 0.352/0.926/1.500/0.574 ms
`;
  assert.deepEqual(parsePingReplies(out), [0.352, 1.5]);
  assert.deepEqual(parsePingReplies('64 bytes from ::1: icmp_seq=1 ttl=64 time<1 ms'), [1]);
  assert.deepEqual(parsePingReplies('ping: socket: Operation not permitted'), []);
  assert.deepEqual(pingArgs('10.0.0.1', 3, 2000), ['-n', '-c', '3', '-i', '0.2', '-W', '2', '-w', '2', '10.0.0.1']);
  assert.deepEqual(pingArgs('10.0.0.1', 0, 300).slice(2, 3), ['1'], 'at least one echo');
  assert.deepEqual(pingArgs('10.0.0.1', 1, 300).slice(5, 7), ['-W', '1'], 'deadline at least 1 s');
});
