import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeService } from '../helpers/dns-tools.js';
import { batchSupport } from '../../runtime/dns/batch-socket.js';
import { questionType } from '../../runtime/dns/wire-query.js';
import { buildQueryPacket } from '../../runtime/dns/query-packet.js';

// dns.maxQueryAge (docs/dns.md "Stale queries"): queries that waited in the UDP receive queue
// longer than a client waits are dropped unanswered and counted; the ones behind them are
// answered. The queries come from another process, so they keep arriving while this process (the
// daemon's event loop) is blocked.
const batched = batchSupport().available;

/** A child process that sends one query every `everyMs` for `forMs` and reports each query's send time and whether it was answered. */
function sender(port: number, everyMs: number, forMs: number): Promise<{ id: number; sentAt: number; answered: boolean }[]> {
  const script = `
    const dgram = require('node:dgram');
    const s = dgram.createSocket('udp4');
    const sent = new Map(); const answered = new Set();
    s.on('message', (m) => answered.add(m.readUInt16BE(0)));
    const q = Buffer.from(process.argv[1], 'base64');
    let id = 1;
    const start = Date.now();
    const t = setInterval(() => {
      if (Date.now() - start >= ${forMs}) { clearInterval(t); setTimeout(() => { s.close(); process.stdout.write(JSON.stringify([...sent].map(([id, sentAt]) => ({ id, sentAt, answered: answered.has(id) })))); }, 2500); return; }
      const p = Buffer.from(q); p.writeUInt16BE(id, 0); sent.set(id, Date.now()); id++;
      s.send(p, ${port}, '127.0.0.1');
    }, ${everyMs});`;
  const query = buildQueryPacket('www.stale.test', 1).toString('base64');
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['-e', script, query], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    const killer = setTimeout(() => p.kill('SIGKILL'), (forMs + 15_000));
    p.on('error', reject);
    p.on('close', () => { clearTimeout(killer); try { resolve(JSON.parse(out)); } catch (err) { reject(err as Error); } });
  });
}

/** `gslbd_dns_queries_total{type="A",rcode="dropped"}`. */
async function droppedA(d: TestDaemon): Promise<number> {
  const m = (await d.core.metrics.getMetricsAsJSON()).find((x) => x.name === 'gslbd_dns_queries_total');
  const v = (m?.values ?? []).find((x) => x.labels.type === 'A' && x.labels.rcode === 'dropped');
  return Number(v?.value ?? 0);
}

/** `gslbd_dns_query_duration_seconds_count`: the queries answered and timed. */
async function timed(d: TestDaemon): Promise<number> {
  const m = (await d.core.metrics.getMetricsAsJSON()).find((x) => x.name === 'gslbd_dns_query_duration_seconds');
  const v = (m?.values ?? []).find((x) => (x as { metricName?: string }).metricName === 'gslbd_dns_query_duration_seconds_count');
  return Number(v?.value ?? 0);
}

/** Busy-waits: nothing else runs on this thread meanwhile, the DNS socket included. */
function block(ms: number): { from: number; to: number } {
  const from = Date.now();
  while (Date.now() - from < ms) { /* the event loop is blocked */ }
  return { from, to: Date.now() };
}

for (const row of [
  { name: 'queries older than dns.maxQueryAge are dropped and counted; the ones behind them are answered', maxQueryAge: '1s' },
  { name: 'with dns.maxQueryAge 0s every query is answered, however long it waited', maxQueryAge: '0s' },
]) {
  test(row.name, { skip: batched ? false : 'udp batch addon unavailable (the dgram path has no receive time)' }, async () => {
    // one answering thread: the test blocks the main thread's loop, and a worker thread would answer at once
    const d = await startTestDaemon({ dns: { listenAddr: '127.0.0.1', port: 0, domain: 'stale.test', maxQueryAge: row.maxQueryAge, workers: 0 } as never });
    try {
      assert.equal(d.ports.dnsUdpPath, 'batched');
      await makeService(d, { name: 'web', domain: 'www.stale.test.', ttl: 60 }, [{ ipAddress: '192.0.2.1' }]);
      const before = await droppedA(d);
      const timedBefore = await timed(d);
      const run = sender(d.ports.dnsPort as number, 20, 3000);
      // let the sender get going and be answered, then stop this thread for 1.5 s
      await new Promise((r) => setTimeout(r, 700));
      const b = block(1500);
      const queries = await run;
      const dropped = (await droppedA(d)) - before;

      const early = queries.filter((q) => q.sentAt < b.from - 100);
      const old = queries.filter((q) => q.sentAt > b.from + 50 && q.sentAt < b.to - 1000 - 100);
      const fresh = queries.filter((q) => q.sentAt > b.to - 1000 + 200);
      assert.ok(early.length >= 10 && old.length >= 10 && fresh.length >= 20, `enough queries in each window: ${early.length}, ${old.length}, ${fresh.length}`);
      assert.ok(early.every((q) => q.answered), 'queries before the block are answered');
      assert.ok(fresh.every((q) => q.answered), 'queries younger than dns.maxQueryAge when read are answered');
      const lost = queries.filter((q) => !q.answered);
      if (row.maxQueryAge === '0s') {
        assert.deepEqual(lost, [], 'nothing is dropped');
        assert.equal(dropped, 0);
      } else {
        assert.ok(old.every((q) => !q.answered), 'queries that waited longer than dns.maxQueryAge get no answer');
        assert.equal(dropped, lost.length, 'every unanswered query is counted as dropped');
        const answered = queries.length - lost.length;
        assert.equal((await timed(d)) - timedBefore, answered, 'the duration histogram holds the answered queries only, not the dropped ones');
      }
    } finally {
      await d.stop();
    }
  });
}

test('questionType reads the QTYPE of the first question, 0 for a packet without one', () => {
  assert.equal(questionType(buildQueryPacket('www.stale.test', 28)), 28);
  assert.equal(questionType(buildQueryPacket('.', 6)), 6);
  const noQuestion = buildQueryPacket('a.test', 1);
  noQuestion.writeUInt16BE(0, 4);
  assert.equal(questionType(noQuestion), 0);
  assert.equal(questionType(buildQueryPacket('www.stale.test', 1).subarray(0, 20)), 0, 'a name that does not end in the packet');
  assert.equal(questionType(Buffer.alloc(5)), 0);
});
