import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { BatchSocket, batchSupport, ipv6Text } from '../../../runtime/dns/batch-socket.js';
import { PACKAGE_ROOT } from '../../../runtime/paths.js';
import { waitUntil } from '../../helpers/wait.js';

const support = batchSupport();
const skip = support.available ? false : `udp batch addon unavailable: ${support.reason}`;

/** An echo server on the batched socket: reply = request bytes with 0x80 set in byte 2 (QR). */
function echoServer(address: string, opts: { onCount?: (n: number) => void; onRequest?: (req: Buffer) => void; coalesceUs?: number } = {}) {
  const sources: string[] = [];
  let maxBatch = 0;
  const s: BatchSocket = BatchSocket.open(address, 0, (count) => {
    maxBatch = Math.max(maxBatch, count);
    opts.onCount?.(count);
    for (let i = 0; i < count; i++) {
      const len = s.rxLength(i);
      if (len < 12) continue; // garbage: no reply
      const req = s.request(i);
      opts.onRequest?.(req);
      const at = s.txOffset(i);
      req.copy(s.mem, at);
      s.mem[at + 2] = s.mem[at + 2]! | 0x80;
      s.setReply(i, len);
      sources.push(`${s.source(i)}#${s.sourcePort(i)}`);
    }
  }, { coalesceUs: opts.coalesceUs ?? 0 });
  return { s, sources, maxBatch: () => maxBatch };
}

const bindClient = (type: 'udp4' | 'udp6', addr: string) => new Promise<Socket>((resolve, reject) => {
  const c = createSocket(type);
  c.once('error', reject);
  c.bind(0, addr, () => { c.off('error', reject); resolve(c); });
});
const closeClient = (c: Socket) => new Promise<void>((r) => c.close(() => r()));

function packet(id: number, client: number, size = 32): Buffer {
  const b = Buffer.alloc(size);
  b.writeUInt16BE(id, 0);
  b.writeUInt16BE(client, 12);
  return b;
}

test('ipv6Text writes addresses as dgram reports them', () => {
  const cases: [string, number[]][] = [
    ['::1', [0, 0, 0, 0, 0, 0, 0, 1]],
    ['::', [0, 0, 0, 0, 0, 0, 0, 0]],
    ['2001:db8::1', [0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]],
    ['2001:db8:0:1::1', [0x2001, 0xdb8, 0, 1, 0, 0, 0, 1]],
    ['2001:0:0:1::1', [0x2001, 0, 0, 1, 0, 0, 0, 1]],
    ['fe80::1:0:0:1', [0xfe80, 0, 0, 0, 1, 0, 0, 1]],
    ['2001:db8:1:2:3:4:5:6', [0x2001, 0xdb8, 1, 2, 3, 4, 5, 6]],
    ['2001:db8:0:2:3:4:5:6', [0x2001, 0xdb8, 0, 2, 3, 4, 5, 6]],
    ['1::', [1, 0, 0, 0, 0, 0, 0, 0]],
    ['::ffff:192.0.2.1', [0, 0, 0, 0, 0, 0xffff, 0xc000, 0x0201]],
    ['::192.0.2.1', [0, 0, 0, 0, 0, 0, 0xc000, 0x0201]],
  ];
  for (const [want, words] of cases) {
    const b = Buffer.alloc(16);
    words.forEach((w, k) => b.writeUInt16BE(w, 2 * k));
    assert.equal(ipv6Text(b), want);
  }
});

test('many queries from several client sockets: all answered, right IDs, right sources, in batches', { skip }, async () => {
  const srv = echoServer('127.0.0.1');
  const clients = await Promise.all(Array.from({ length: 6 }, () => bindClient('udp4', '127.0.0.1')));
  const perClient = 300;
  const got = clients.map(() => new Set<number>());
  let wrong = 0;
  clients.forEach((c, ci) => c.on('message', (m) => {
    if (m.readUInt16BE(12) !== ci || (m[2]! & 0x80) === 0) wrong++;
    got[ci]!.add(m.readUInt16BE(0));
  }));
  const done = () => got.every((g) => g.size === perClient);
  // Bursts of 50 per client, resent until answered (loopback may drop under a burst): bounded by
  // the number of rounds, each waiting up to a second for its answers.
  for (let round = 0; round < 20 && !done(); round++) {
    for (let from = 0; from < perClient; from += 50) {
      clients.forEach((c, ci) => {
        for (let id = from; id < from + 50; id++) if (!got[ci]!.has(id)) c.send(packet(id, ci), srv.s.port, '127.0.0.1');
      });
      await new Promise((r) => setTimeout(r, 5));
    }
    for (let k = 0; k < 100 && !done(); k++) await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(wrong, 0);
  for (const g of got) assert.equal(g.size, perClient);
  const ports = new Set(clients.map((c) => `127.0.0.1#${c.address().port}`));
  assert.ok(srv.sources.every((s) => ports.has(s)), 'sources are the client addresses');
  assert.ok(srv.maxBatch() > 1, `packets arrived in batches (max ${srv.maxBatch()})`);
  const st = srv.s.stats();
  assert.ok(st.sent >= perClient * clients.length);
  srv.s.close();
  await Promise.all(clients.map(closeClient));
});

test('garbage, empty and oversized datagrams are skipped; the socket keeps answering', { skip }, async () => {
  const srv = echoServer('127.0.0.1');
  const c = await bindClient('udp4', '127.0.0.1');
  const replies: Buffer[] = [];
  c.on('message', (m) => replies.push(m));
  c.send(Buffer.alloc(0), srv.s.port, '127.0.0.1');
  c.send(Buffer.from([1, 2, 3]), srv.s.port, '127.0.0.1');
  c.send(Buffer.alloc(9000, 0xab), srv.s.port, '127.0.0.1'); // larger than a slot: dropped
  for (let i = 0; i < 200; i++) c.send(Buffer.from(Array.from({ length: (i * 37) % 300 }, (_, k) => (k * 131 + i) & 0xff)), srv.s.port, '127.0.0.1');
  c.send(packet(4242, 0), srv.s.port, '127.0.0.1');
  await waitUntil('a valid packet after garbage answered', () => replies.some((m) => m.readUInt16BE(0) === 4242 && m.length === 32), { everyMs: 10 });
  assert.ok(!replies.some((m) => m.length < 12 || m.length > 4096));
  assert.equal(srv.s.stats().truncated, 1);
  srv.s.close();
  await closeClient(c);
});

test('request views: a packet of the length the slot saw last reuses its view and shows the new bytes', { skip }, async () => {
  const views: Buffer[] = [];
  const srv = echoServer('127.0.0.1', { onRequest: (req) => views.push(req) });
  const c = await bindClient('udp4', '127.0.0.1');
  const seen: Buffer[] = [];
  const s = srv.s;
  c.on('message', (m) => seen.push(m));
  // One packet at a time, so each lands in slot 0: equal lengths in a row, then a new length.
  const sizes = [32, 32, 32, 40, 40, 32, 300, 300, 12, 32];
  for (const [k, size] of sizes.entries()) {
    const p = Buffer.alloc(size, 0x30 + k);
    p.writeUInt16BE(k, 0);
    p[2] = 0;
    c.send(p, s.port, '127.0.0.1');
    await waitUntil(`reply ${k}`, () => seen.length > k, { everyMs: 5 });
    assert.equal(seen.length, k + 1, `reply ${k}`);
    const m = seen[k]!;
    assert.equal(m.length, size, `reply ${k}: the packet's length`);
    assert.equal(m.readUInt16BE(0), k, `reply ${k}: its own id`);
    assert.ok(m.subarray(3).every((b) => b === 0x30 + k), `reply ${k}: its own bytes`);
  }
  assert.equal(views.length, sizes.length);
  // a new view only where the length changed: 32, 40, 32, 300, 12, 32
  assert.equal(new Set(views).size, 6, 'views were reused while the length stayed');
  s.close();
  await closeClient(c);
});

test('close while busy: no crash, no more replies, idempotent, sendTo after close is refused', { skip }, async () => {
  let batches = 0;
  let s!: BatchSocket;
  const srv = echoServer('127.0.0.1', { onCount: () => { batches++; if (batches === 2) s.close(); } });
  s = srv.s;
  const c = await bindClient('udp4', '127.0.0.1');
  let replies = 0;
  c.on('message', () => { replies++; });
  for (let burst = 0; burst < 10; burst++) {
    for (let i = 0; i < 100; i++) c.send(packet(i, 0), s.port, '127.0.0.1');
    await new Promise((r) => setTimeout(r, 5));
  }
  await new Promise((r) => setTimeout(r, 50));
  const before = replies;
  assert.ok(batches >= 2);
  assert.equal(s.stats().closed, true);
  for (let i = 0; i < 50; i++) c.send(packet(i, 0), s.port, '127.0.0.1');
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(replies, before, 'no replies after close');
  s.close();
  assert.equal(s.sendTo(Buffer.alloc(12), 4, Buffer.from([127, 0, 0, 1]), c.address().port), false);
  await closeClient(c);
});

test('sendTo sends one reply outside a batch; a port in use is EADDRINUSE', { skip }, async () => {
  const srv = echoServer('127.0.0.1');
  const c = await bindClient('udp4', '127.0.0.1');
  const got = new Promise<Buffer>((r) => c.once('message', r));
  assert.equal(srv.s.sendTo(packet(7, 0), 4, Buffer.from([127, 0, 0, 1]), c.address().port), true);
  assert.equal((await got).readUInt16BE(0), 7);
  assert.equal(srv.s.sendTo(packet(7, 0), 4, Buffer.from([127, 0, 0, 1]), 0), false, 'port 0 is never sent to');
  assert.throws(() => BatchSocket.open('127.0.0.1', srv.s.port, () => {}), (e: NodeJS.ErrnoException) => e.code === 'EADDRINUSE');
  assert.throws(() => BatchSocket.open('not-an-ip', 0, () => {}), /literal/);
  srv.s.close();
  await closeClient(c);
});

test('receive coalescing: a steady stream is read on the timer in batches, a lone query after it is read per packet', { skip }, async () => {
  // A 30 ms window makes the two modes far apart in time: during the stream replies wait for the
  // timer, so each read holds many packets; once the stream stops, the next tick finds nothing and
  // the socket is read per packet again.
  const srv = echoServer('127.0.0.1', { coalesceUs: 30_000 });
  const c = await bindClient('udp4', '127.0.0.1');
  const got = new Set<number>();
  c.on('message', (m) => { got.add(m.readUInt16BE(0)); });
  const sent = 400;
  for (let id = 0; id < sent; id++) {
    c.send(packet(id, 0), srv.s.port, '127.0.0.1');
    if (id % 4 === 3) await new Promise((r) => setTimeout(r, 1));
  }
  await waitUntil('every query of the stream answered', () => got.size === sent, { everyMs: 10, describe: () => `${got.size} of ${sent} answered` });
  const st = srv.s.stats();
  assert.ok(st.ticks! > 0, 'the timer read the socket');
  assert.ok(st.received / st.batches! >= 8, `reads hold many packets (mean ${(st.received / st.batches!).toFixed(1)})`);
  // Idle: the next tick finds nothing and switches back to reading per packet; the timer stops,
  // so its count holds still (over a window of several of its periods, each try).
  const ticks = await waitUntil('the coalescing timer to stop', async () => {
    const before = srv.s.stats().ticks!;
    await new Promise((r) => setTimeout(r, 150));
    return srv.s.stats().ticks === before ? before : undefined;
  }, { everyMs: 0 });
  // A lone query is read per packet, not by the timer (whose 30 ms wait it would otherwise add);
  // its answer's time is measured by `npm run bench:dns`, not bounded here.
  const lone = new Promise<void>((r) => c.on('message', (m) => { if (m.readUInt16BE(0) === 9999) r(); }));
  c.send(packet(9999, 0), srv.s.port, '127.0.0.1');
  await lone;
  assert.equal(srv.s.stats().ticks, ticks, 'no timer read after the switch back: the lone query was read per packet');
  srv.s.close();
  for (let k = 0; k < 10 && !srv.s.stats().closed; k++) await new Promise<void>((r) => setImmediate(r));
  assert.equal(srv.s.stats().closed, true, 'both handles closed');
  await closeClient(c);
});

test('receive coalescing off (0): no timer reads; a window out of range is refused', { skip }, async () => {
  const srv = echoServer('127.0.0.1');
  const c = await bindClient('udp4', '127.0.0.1');
  let n = 0;
  c.on('message', () => { n++; });
  for (let id = 0; id < 200; id++) {
    c.send(packet(id, 0), srv.s.port, '127.0.0.1');
    if (id % 4 === 3) await new Promise((r) => setTimeout(r, 1));
  }
  await waitUntil('200 replies', () => n >= 200, { everyMs: 10, describe: () => `${n} replies` });
  assert.equal(n, 200);
  assert.equal(srv.s.stats().ticks, 0);
  srv.s.close();
  await closeClient(c);
  assert.throws(() => BatchSocket.open('127.0.0.1', 0, () => {}, { coalesceUs: 100_001 }), RangeError);
  assert.throws(() => BatchSocket.open('127.0.0.1', 0, () => {}, { coalesceUs: -1 }), RangeError);
});

test('a worker thread that ends with a socket open (or closing) exits cleanly', { skip }, async () => {
  const addon = join(PACKAGE_ROOT, 'native', 'udp-batch', 'build', 'Release', 'udp_batch.node');
  const code = `const m = require(${JSON.stringify(addon)});
    const a = m.open('127.0.0.1', 0, () => {}); const b = m.open('127.0.0.1', 0, () => {}); m.close(b);
    const c = m.open('127.0.0.1', 0, () => {}, false, 500); const d = m.open('127.0.0.1', 0, () => {}, false, 500); m.close(d);
    require('node:worker_threads').parentPort.postMessage(a.port);`;
  for (let i = 0; i < 3; i++) {
    const w = new Worker(code, { eval: true });
    const port = await new Promise<number>((r) => w.once('message', r));
    assert.ok(port > 0);
    await w.terminate();
  }
});

test('IPv6 on ::1', { skip }, async (t) => {
  let c: Socket;
  try { c = await bindClient('udp6', '::1'); } catch { t.skip('no IPv6 loopback'); return; }
  const srv = echoServer('::1');
  assert.equal(srv.s.family, 6);
  const got = new Promise<Buffer>((r) => c.once('message', r));
  c.send(packet(99, 0), srv.s.port, '::1');
  assert.equal((await got).readUInt16BE(0), 99);
  assert.deepEqual(srv.sources, [`::1#${c.address().port}`]);
  // a v4 client reaches a dual-stack "::" socket and is reported as a mapped address
  const dual = echoServer('::');
  const c4 = await bindClient('udp4', '127.0.0.1');
  const got4 = new Promise<Buffer>((r) => c4.once('message', r));
  c4.send(packet(5, 0), dual.s.port, '127.0.0.1');
  assert.equal((await got4).readUInt16BE(0), 5);
  assert.deepEqual(dual.sources, [`::ffff:127.0.0.1#${c4.address().port}`]);
  srv.s.close();
  dual.s.close();
  await closeClient(c);
  await closeClient(c4);
});
