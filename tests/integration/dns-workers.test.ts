import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import dnsPacket from 'dns-packet';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { delv, dig, dnssecKeygen, makeService, staticKeyAnchor, udpExchange } from '../helpers/dns-tools.js';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { batchSupport } from '../../runtime/dns/batch-socket.js';
import { subnetKey } from '../../runtime/rum/subnet.js';
import { waitUntil } from '../helpers/wait.js';

// dns.workers: 2 — the main thread's batched UDP socket plus one worker thread's, in one
// SO_REUSEPORT group (docs/dns.md "Workers"). Answering thread 0 is the main thread, 1 the worker.
const skip = batchSupport().available ? false : 'udp batch addon unavailable';

/**
 * One A query for `name` from each of `n` sockets (n distinct source ports, so the kernel's
 * reuseport hash spreads them over the group); returns each reply's rcode and answers.
 */
async function fromManyPorts(port: number, name: string, n = 32): Promise<{ rcode: string; answers: string[] }[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => new Promise<{ rcode: string; answers: string[] }>((resolve, reject) => {
    const s = createSocket('udp4');
    const timer = setTimeout(() => { s.close(); reject(new Error(`no reply to query ${i}`)); }, 3000);
    s.on('message', (m) => {
      clearTimeout(timer);
      s.close();
      const r = dnsPacket.decode(m);
      resolve({ rcode: String((r as { rcode?: string }).rcode), answers: (r.answers ?? []).map((a) => String((a as { data?: unknown }).data)).sort() });
    });
    s.send(dnsPacket.encode({ type: 'query', id: i, flags: 0, questions: [{ name, type: 'A' }] }), port, '127.0.0.1');
  })));
}

/**
 * Queries from many source ports until both answering threads have answered at least once since
 * `before` (bounded rounds); every reply must satisfy `ok`.
 */
async function untilBothAnswer(d: TestDaemon, name: string, ok: (r: { rcode: string; answers: string[] }) => boolean, what: string) {
  const counts = d.ports.dnsWorkerQueries as () => number[];
  const before = counts();
  for (let round = 0; round < 10; round++) {
    const replies = await fromManyPorts(d.ports.dnsPort as number, name);
    for (const r of replies) assert.ok(ok(r), `${what}: got ${r.rcode} ${r.answers.join(',')}`);
    const now = counts();
    if (now.length === 2 && now.every((c, i) => c > before[i]!)) return;
  }
  assert.fail(`${what}: the queries did not reach both answering threads (${counts().join(', ')})`);
}

/** Queries from many ports until every reply satisfies `ok` (tests/helpers/wait.ts ceiling); a timeout shows the last replies. */
async function untilEvery(d: TestDaemon, name: string, ok: (r: { rcode: string; answers: string[] }) => boolean, what: string) {
  let bad: string[] = [];
  await waitUntil(what, async () => {
    const replies = await fromManyPorts(d.ports.dnsPort as number, name);
    bad = replies.filter((r) => !ok(r)).map((r) => `${r.rcode} ${r.answers.join(',')}`);
    return bad.length === 0;
  }, { everyMs: 20, describe: () => `replies not yet as wanted: ${bad.join('; ')}` });
}

async function scrape(d: TestDaemon): Promise<string> {
  const r = await fetch(`http://127.0.0.1:${d.ports.metricsPort as number}/metrics`);
  return r.text();
}

const sample = (text: string, re: RegExp) => Number(re.exec(text)?.[1] ?? NaN);

test('dns.workers 2: both threads answer, writes and health flips reach them, log and metrics count them, shutdown ends the thread', { skip, timeout: 60_000 }, async () => {
  const d = await startTestDaemon({
    dns: { listenAddr: '127.0.0.1', port: 0, domain: 'workers.test', queryLog: true, workers: 2 } as never,
    metrics: { enablePrometheus: true, listenAddr: '127.0.0.1', port: 0 } as never,
  });
  const running = d.ports.dnsWorkersRunning as () => number;
  let stopped = false;
  try {
    assert.equal(d.ports.dnsUdpPath, 'batched');
    assert.equal(running(), 1, 'one worker thread beside the main thread');
    assert.ok(d.logs.lines.some((l) => l.msg === 'dns workers answering' && l.workers === 2));

    // A write is served by every thread as soon as the API has answered it.
    const s = await makeService(d, { name: 'web', domain: 'www.workers.test.', ttl: 60 }, [{ ipAddress: '192.0.2.1' }, { ipAddress: '192.0.2.2' }]);
    await untilBothAnswer(d, 'www.workers.test', (r) => r.rcode === 'NOERROR' && r.answers.join() === '192.0.2.1,192.0.2.2', 'right after the write');

    // The TCP listener stays on the main thread.
    const tcp = await dig(d.ports.dnsPort as number, ['www.workers.test', 'A', '+tcp']);
    assert.deepEqual([...tcp.answers].sort(), ['192.0.2.1', '192.0.2.2']);

    // A health flip reaches the worker: bounded wait until no thread answers with the member.
    d.core.health.set(s.poolId, '192.0.2.1', { healthy: false, score: 0, lastChecked: Date.now(), rttMs: 1, node: 'test-node' });
    await untilEvery(d, 'www.workers.test', (r) => r.answers.join() === '192.0.2.2', 'the health flip reached every thread');
    await untilBothAnswer(d, 'www.workers.test', (r) => r.answers.join() === '192.0.2.2', 'after the health flip');

    // A deletion too: NXDOMAIN from every thread right after the DELETE returns.
    const del = await fetch(`${d.url}/api/v1/services/${s.serviceId}`, { method: 'DELETE', headers: { 'x-api-key': String(d.core.systemKey ?? '') } });
    assert.ok(del.status === 204 || del.status === 200, `delete: ${del.status}`);
    await untilBothAnswer(d, 'www.workers.test', (r) => r.rcode === 'NXDOMAIN', 'right after the delete');

    // RUM: samples recorded on the main thread reach the worker's store, so the rum step decides
    // the same on every thread (terminal: one answer; without data, the first candidate of the rotation).
    await makeService(d, { name: 'rum', domain: 'rum.workers.test.', chain: ['rum'] },
      [{ ipAddress: '192.0.2.31', rumUrl: 'http://192.0.2.31/rum' }, { ipAddress: '192.0.2.32', rumUrl: 'http://192.0.2.32/rum' }]);
    await untilBothAnswer(d, 'rum.workers.test', (r) => r.answers.length === 1, 'rum without data');
    const store = (d.ports.rum as { store: { add(key: string, ip: string, ms: number): void } }).store;
    store.add(subnetKey('127.0.0.1')!, '192.0.2.32', 5);
    store.add(subnetKey('127.0.0.1')!, '192.0.2.31', 80);
    await untilEvery(d, 'rum.workers.test', (r) => r.answers.join() === '192.0.2.32', 'the RUM samples reached every thread');
    await untilBothAnswer(d, 'rum.workers.test', (r) => r.answers.join() === '192.0.2.32', 'rum with data');

    // Query log: lines from the worker (worker: 1) and from the main thread, same format.
    await new Promise((r) => setTimeout(r, 50));
    const lines = d.logs.lines.filter((l) => l.msg === 'dns query' && l.name === 'www.workers.test.');
    const fromWorker = lines.find((l) => l.worker === 1);
    assert.ok(fromWorker, 'the worker logs its queries through the main thread');
    assert.ok(lines.some((l) => l.worker === undefined), 'the main thread logs its own');
    for (const k of ['name', 'type', 'src', 'rcode', 'answers', 'duration_us']) assert.ok(k in fromWorker!, `field ${k}`);

    // Metrics: every thread's queries, per thread and in the totals.
    const [main, worker] = (d.ports.dnsWorkerQueries as () => number[])();
    const text = await scrape(d);
    assert.equal(sample(text, /gslbd_dns_worker_queries_total\{[^}]*worker="0"[^}]*\} (\d+)/), main);
    assert.equal(sample(text, /gslbd_dns_worker_queries_total\{[^}]*worker="1"[^}]*\} (\d+)/), worker);
    assert.ok(main! > 0 && worker! > 0);
    const byRcode = [...text.matchAll(/^gslbd_dns_queries_total\{[^}]*\} (\d+)$/gm)].reduce((a, m) => a + Number(m[1]), 0);
    assert.equal(byRcode, main! + worker!, 'gslbd_dns_queries_total counts both threads');
    assert.equal(sample(text, /gslbd_dns_query_duration_seconds_count(?:\{[^}]*\})? (\d+)/), main! + worker!);
    // Reads of the batched sockets, both threads: at least one per thread, never more than the UDP
    // queries (TCP queries are among the totals but take no read).
    const reads = sample(text, /^gslbd_dns_udp_batches_total(?:\{[^}]*\})? (\d+)$/m)!;
    assert.ok(reads >= 2 && reads <= main! + worker!, `gslbd_dns_udp_batches_total ${reads} of ${main! + worker!} queries`);

    // A second daemon on the same port fails instead of joining the group.
    await assert.rejects(
      startTestDaemon({ dns: { listenAddr: '127.0.0.1', port: d.ports.dnsPort as number, workers: 2 } as never }),
      (err: NodeJS.ErrnoException) => err.code === 'EADDRINUSE',
    );
    await assert.rejects(
      startTestDaemon({ dns: { listenAddr: '127.0.0.1', port: d.ports.dnsPort as number } as never }),
      (err: NodeJS.ErrnoException) => err.code === 'EADDRINUSE',
    );

    const port = d.ports.dnsPort as number;
    await d.stop();
    stopped = true;
    assert.equal(running(), 0, 'no worker thread left');
    // Every socket of the group is closed: a plain bind on the port succeeds.
    const probe = createSocket('udp4');
    await new Promise<void>((resolve, reject) => { probe.once('error', reject); probe.bind(port, '127.0.0.1', () => resolve()); });
    probe.close();
  } finally {
    if (!stopped) await d.stop();
  }
});

/** One A query per new source port, one after the other; each reply's answers in wire order. */
async function sequential(port: number, name: string, n: number): Promise<string[][]> {
  const out: string[][] = [];
  for (let i = 0; i < n; i++) {
    const s = createSocket('udp4');
    const reply = await new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => { reject(new Error(`no reply to query ${i}`)); }, 3000);
      s.on('message', (m) => { clearTimeout(timer); resolve(m); });
      s.send(dnsPacket.encode({ type: 'query', id: i, flags: 0, questions: [{ name, type: 'A' }] }), port, '127.0.0.1');
    }).finally(() => s.close());
    out.push((dnsPacket.decode(reply).answers ?? []).map((a) => String((a as { data?: unknown }).data)));
  }
  return out;
}

test('dns.workers 2: round-robin rotates as one sequence whichever thread answers', { skip, timeout: 60_000 }, async () => {
  const d = await startTestDaemon({ dns: { listenAddr: '127.0.0.1', port: 0, domain: 'rr.test', workers: 2 } as never });
  try {
    const members = ['192.0.2.11', '192.0.2.12', '192.0.2.13'];
    await makeService(d, { name: 'rr', domain: 'www.rr.test.', algorithm: 'round-robin' }, members.map((ipAddress) => ({ ipAddress })));
    const counts = d.ports.dnsWorkerQueries as () => number[];
    const before = counts();
    const firsts = (await sequential(d.ports.dnsPort as number, 'www.rr.test', 60)).map((a) => a[0]!);
    const after = counts();
    assert.ok(after.every((c, i) => c > before[i]!), `both threads answered (${before.join(',')} → ${after.join(',')})`);
    // each reply's first answer is the one after the previous reply's: one counter for both threads
    for (let i = 1; i < firsts.length; i++) {
      assert.equal(members.indexOf(firsts[i]!), (members.indexOf(firsts[i - 1]!) + 1) % members.length, `query ${i}: ${firsts.join(' ')}`);
    }
  } finally {
    await d.stop();
  }
});

test('dns.workers 2 with dns.dnssec: every thread signs, and delv validates answers from both', { skip, timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-dnssec-workers-'));
  const zone = 'signed.test';
  const ksk = await dnssecKeygen(dir, zone, 'ECDSAP256SHA256', true);
  const zsk = await dnssecKeygen(dir, zone, 'ECDSAP256SHA256', false);
  const d = await startTestDaemon({
    dns: { listenAddr: '127.0.0.1', port: 0, domain: zone, nsNames: [`ns1.${zone}.`], workers: 2,
      dnssec: { enabled: true, algorithm: 'ecdsap256sha256', keys: [{ file: ksk, role: 'ksk' }, { file: zsk, role: 'zsk' }] } },
  } as never);
  try {
    await makeService(d, { name: 'web', domain: `www.${zone}.` }, [{ ipAddress: '192.0.2.1' }]);
    const port = d.ports.dnsPort as number;
    const counts = d.ports.dnsWorkerQueries as () => number[];
    const before = counts();
    // DO queries from many source ports: every reply carries the RRSIG of its answer
    for (let round = 0; round < 10 && !counts().every((c, i) => c > before[i]!); round++) {
      const replies = await Promise.all(Array.from({ length: 32 }, (_, i) => udpExchange(port, dnsPacket.encode({
        type: 'query', id: i, flags: dnsPacket.RECURSION_DESIRED, questions: [{ name: `www.${zone}`, type: 'A' }],
        additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: dnsPacket.DNSSEC_OK }],
      } as never))));
      for (const r of replies) {
        const types = (dnsPacket.decode(r).answers ?? []).map((a) => a.type).sort();
        assert.deepEqual(types, ['A', 'RRSIG'], 'a signed answer');
      }
    }
    assert.ok(counts().every((c, i) => c > before[i]!), `both threads answered (${counts().join(',')})`);
    const anchor = join(dir, 'anchor.conf');
    writeFileSync(anchor, staticKeyAnchor(readFileSync(`${ksk}.key`, 'utf8')));
    for (let i = 0; i < 6; i++) {
      const text = await delv(port, anchor, zone, [`www.${zone}`, 'A']);
      assert.match(text, /^; fully validated$/m, text);
    }
    assert.equal(d.logs.lines.filter((l) => l.msg === 'dnssec signing').length, 2, 'a signer on each thread');
  } finally {
    await d.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
