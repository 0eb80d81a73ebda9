import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import dnsPacket from 'dns-packet';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { dig, makeService } from '../helpers/dns-tools.js';
import { buildQueryPacket } from '../../runtime/dns/query-packet.js';

let d: TestDaemon;
let port: number;

before(async () => {
  d = await startTestDaemon({ dns: { listenAddr: '127.0.0.1', port: 0, domain: 'fuzz.test' } as never });
  port = d.ports.dnsPort as number;
  await makeService(d, { name: 'f', domain: 'www.fuzz.test.', algorithm: 'map-file' }, [{ ipAddress: '192.0.2.1' }, { ipAddress: '192.0.2.2' }], [{ cidr: '10.0.0.0/8', endpoint: '192.0.2.2' }]);
});
after(async () => { await d?.stop(); });

/** Deterministic PRNG (mulberry32) so a failure can be replayed. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function corpus(rand: () => number): Buffer[] {
  const valid = [
    buildQueryPacket('www.fuzz.test.', 1, '10.1.2.0/24'),
    buildQueryPacket('www.fuzz.test.', 28, '2001:db8::/32'),
    dnsPacket.encode({ type: 'query', id: 3, flags: 256, questions: [{ name: 'fuzz.test', type: 'SOA' }] }),
  ];
  const out: Buffer[] = [];
  // every truncation of every valid query
  for (const v of valid) for (let len = 0; len < v.length; len++) out.push(v.subarray(0, len));
  // random bytes, with and without a plausible header
  for (let i = 0; i < 2500; i++) {
    const b = Buffer.alloc(Math.floor(rand() * 300));
    for (let j = 0; j < b.length; j++) b[j] = Math.floor(rand() * 256);
    if (i % 2 === 0 && b.length >= 12) { b[2] = b[2]! & 0x7f; b.writeUInt16BE(1, 4); }
    out.push(b);
  }
  // bit flips and count corruption of valid queries
  for (let i = 0; i < 2500; i++) {
    const b = Buffer.from(valid[i % valid.length]!);
    for (let k = 0; k < 1 + Math.floor(rand() * 4); k++) b[Math.floor(rand() * b.length)]! ^= 1 << Math.floor(rand() * 8);
    out.push(b);
  }
  return out;
}

test('thousands of random, truncated and corrupted packets over UDP and TCP; the server keeps answering', async () => {
  const packets = corpus(prng(20261121));
  assert.ok(packets.length > 5000);
  const s = createSocket('udp4');
  let replies = 0;
  let headerless = 0;
  s.on('message', (m) => {
    replies++;
    if (m.length < 12) headerless++;
  });
  // Bounded bursts so the kernel buffers do not overflow on a busy machine.
  for (let i = 0; i < packets.length; i += 100) {
    for (const p of packets.slice(i, i + 100)) s.send(p, port, '127.0.0.1');
    await new Promise((r) => setTimeout(r, 2));
  }
  await new Promise((r) => setTimeout(r, 300));
  s.close();
  assert.equal(headerless, 0, 'every reply has a header');
  assert.ok(replies > 1000, `replies to well-formed-enough packets: ${replies}`);

  // TCP: garbage frames, a frame cut short, then a valid query on a fresh connection.
  for (const chunk of [packets.slice(0, 200), packets.slice(3000, 3300)]) {
    await new Promise<void>((resolve) => {
      const c = connect(port, '127.0.0.1', () => {
        for (const p of chunk) { const h = Buffer.alloc(2); h.writeUInt16BE(p.length); c.write(Buffer.concat([h, p])); }
        c.end(Buffer.from([0x01, 0x00, 0x00])); // length 256, 1 byte body: left incomplete
      });
      c.on('data', () => {});
      c.on('error', () => resolve());
      c.on('close', () => resolve());
    });
  }

  const ok = await dig(port, ['www.fuzz.test', 'A', '+subnet=10.9.0.0/16']);
  assert.equal(ok.status, 'NOERROR');
  assert.deepEqual(ok.answers, ['192.0.2.2', '192.0.2.1']);
  assert.equal((await dig(port, ['www.fuzz.test', 'A', '+tcp'])).answers.length, 2);
  assert.ok(!d.logs.lines.some((l) => l.msg === 'dns answer failed'), 'no exception on the answer path');
});
