import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import dnsPacket from 'dns-packet';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { delv, dig, dnssecKeygen, makeService, staticKeyAnchor, udpExchange } from '../helpers/dns-tools.js';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { batchSupport } from '../../runtime/dns/batch-socket.js';
import { subnetKey } from '../../runtime/rum/subnet.js';
import { waitUntil } from '../helpers/wait.js';

// dns.workers: 2 — two worker threads' batched UDP sockets in one SO_REUSEPORT group, the main
// thread out of it (docs/dns.md "Workers"). Answering thread 0 is the main thread (TCP, forwarded
// UPDATEs), 1 and 2 the workers. dns.workers: 0 — the main thread answers UDP alone.
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

/** True when every worker thread (1…) counted more queries than in `before`. */
const workersAnswered = (before: number[], now: number[]) => now.length === before.length && now.slice(1).every((c, i) => c > before[i + 1]!);

/**
 * Queries from many source ports until both worker threads have answered at least once since
 * `before` (bounded rounds); every reply must satisfy `ok`, and the main thread answers none.
 */
async function untilBothAnswer(d: TestDaemon, name: string, ok: (r: { rcode: string; answers: string[] }) => boolean, what: string) {
  const counts = d.ports.dnsWorkerQueries as () => number[];
  const before = counts();
  for (let round = 0; round < 10; round++) {
    const replies = await fromManyPorts(d.ports.dnsPort as number, name);
    for (const r of replies) assert.ok(ok(r), `${what}: got ${r.rcode} ${r.answers.join(',')}`);
    const now = counts();
    assert.equal(now[0], before[0], `${what}: the main thread answered no UDP query`);
    if (now.length === 3 && workersAnswered(before, now)) return;
  }
  assert.fail(`${what}: the queries did not reach both worker threads (${counts().join(', ')})`);
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

test('dns.workers 2: both worker threads answer UDP and the main thread none, writes and health flips reach them, log and metrics count them, shutdown ends the threads', { skip, timeout: 60_000 }, async () => {
  const d = await startTestDaemon({
    dns: { listenAddr: '127.0.0.1', port: 0, domain: 'workers.test', queryLog: true, workers: 2 } as never,
    metrics: { enablePrometheus: true, listenAddr: '127.0.0.1', port: 0 } as never,
  });
  const running = d.ports.dnsWorkersRunning as () => number;
  let stopped = false;
  try {
    assert.equal(d.ports.dnsUdpPath, 'batched');
    assert.equal(running(), 2, 'two worker threads');
    assert.ok(d.logs.lines.some((l) => l.msg === 'dns workers answering' && l.workers === 2));

    // A write is served by every thread as soon as the API has answered it.
    const s = await makeService(d, { name: 'web', domain: 'www.workers.test.', ttl: 60 }, [{ ipAddress: '192.0.2.1' }, { ipAddress: '192.0.2.2' }]);
    await untilBothAnswer(d, 'www.workers.test', (r) => r.rcode === 'NOERROR' && r.answers.join() === '192.0.2.1,192.0.2.2', 'right after the write');

    // The TCP listener stays on the main thread (its one query is the main thread's only one).
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

    // Query log: lines from the workers (worker: 1, 2) and from the main thread (the TCP query), same format.
    await new Promise((r) => setTimeout(r, 50));
    const lines = d.logs.lines.filter((l) => l.msg === 'dns query' && l.name === 'www.workers.test.');
    const fromWorker = lines.find((l) => l.worker === 1);
    assert.ok(fromWorker, 'the worker logs its queries through the main thread');
    assert.ok(lines.some((l) => l.worker === 2), 'so does the second');
    assert.equal(lines.filter((l) => l.worker === undefined).length, 1, 'the main thread logs its own: the TCP query');
    for (const k of ['name', 'type', 'src', 'rcode', 'answers', 'duration_us']) assert.ok(k in fromWorker!, `field ${k}`);

    // Metrics: every thread's queries, per thread and in the totals; the main thread's one is the TCP query.
    const [main, w1, w2] = (d.ports.dnsWorkerQueries as () => number[])();
    const text = await scrape(d);
    assert.equal(sample(text, /gslbd_dns_worker_queries_total\{[^}]*worker="0"[^}]*\} (\d+)/), main);
    assert.equal(sample(text, /gslbd_dns_worker_queries_total\{[^}]*worker="1"[^}]*\} (\d+)/), w1);
    assert.equal(sample(text, /gslbd_dns_worker_queries_total\{[^}]*worker="2"[^}]*\} (\d+)/), w2);
    assert.equal(main, 1, 'the main thread answered the TCP query only');
    assert.ok(w1! > 0 && w2! > 0);
    const all = main! + w1! + w2!;
    const byRcode = [...text.matchAll(/^gslbd_dns_queries_total\{[^}]*\} (\d+)$/gm)].reduce((a, m) => a + Number(m[1]), 0);
    assert.equal(byRcode, all, 'gslbd_dns_queries_total counts every thread');
    assert.equal(sample(text, /gslbd_dns_query_duration_seconds_count(?:\{[^}]*\})? (\d+)/), all);
    // Reads of the batched sockets: at least one per worker, never more than the UDP queries (the
    // TCP query is among the totals but takes no read).
    const reads = sample(text, /^gslbd_dns_udp_batches_total(?:\{[^}]*\})? (\d+)$/m)!;
    assert.ok(reads >= 2 && reads <= w1! + w2!, `gslbd_dns_udp_batches_total ${reads} of ${w1! + w2!} UDP queries`);

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

test('dns.workers 2: round-robin rotates as one sequence whichever worker answers', { skip, timeout: 60_000 }, async () => {
  const d = await startTestDaemon({ dns: { listenAddr: '127.0.0.1', port: 0, domain: 'rr.test', workers: 2 } as never });
  try {
    const members = ['192.0.2.11', '192.0.2.12', '192.0.2.13'];
    await makeService(d, { name: 'rr', domain: 'www.rr.test.', algorithm: 'round-robin' }, members.map((ipAddress) => ({ ipAddress })));
    const counts = d.ports.dnsWorkerQueries as () => number[];
    const before = counts();
    const firsts = (await sequential(d.ports.dnsPort as number, 'www.rr.test', 60)).map((a) => a[0]!);
    const after = counts();
    assert.ok(workersAnswered(before, after), `both workers answered (${before.join(',')} → ${after.join(',')})`);
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
    for (let round = 0; round < 10 && !workersAnswered(before, counts()); round++) {
      const replies = await Promise.all(Array.from({ length: 32 }, (_, i) => udpExchange(port, dnsPacket.encode({
        type: 'query', id: i, flags: dnsPacket.RECURSION_DESIRED, questions: [{ name: `www.${zone}`, type: 'A' }],
        additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: dnsPacket.DNSSEC_OK }],
      } as never))));
      for (const r of replies) {
        const types = (dnsPacket.decode(r).answers ?? []).map((a) => a.type).sort();
        assert.deepEqual(types, ['A', 'RRSIG'], 'a signed answer');
      }
    }
    assert.ok(workersAnswered(before, counts()), `both workers answered (${counts().join(',')})`);
    const anchor = join(dir, 'anchor.conf');
    writeFileSync(anchor, staticKeyAnchor(readFileSync(`${ksk}.key`, 'utf8')));
    for (let i = 0; i < 6; i++) {
      const text = await delv(port, anchor, zone, [`www.${zone}`, 'A']);
      assert.match(text, /^; fully validated$/m, text);
    }
    assert.equal(d.logs.lines.filter((l) => l.msg === 'dnssec signing').length, 3, 'a signer on each thread (the main thread signs TCP answers)');
  } finally {
    await d.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('dns.workers 2: a signed UPDATE a worker thread receives is forwarded, carried out once (replay cache) and answered', { skip, timeout: 60_000 }, async () => {
  const { signRequest, tsigKeyring } = await import('../../runtime/dns/tsig.js');
  const secret = Buffer.from('workers-update-key-of-32-bytes!!').toString('base64');
  const d = await startTestDaemon({
    dns: {
      listenAddr: '127.0.0.1', port: 0, domain: 'workers.test', workers: 2,
      axfr: { tsigKeys: [{ name: 'up.workers.test', secret }] }, update: { enabled: true, grants: [{ key: 'up.workers.test', tenant: 'default' }] },
    } as never,
  });
  try {
    const port = d.ports.dnsPort as number;
    const key = tsigKeyring([{ name: 'up.workers.test', secret }]).get('up.workers.test.')!;
    const now = Math.floor(Date.now() / 1000);
    // each from its own socket (source port): SO_REUSEPORT spreads them over both threads
    const msgs = Array.from({ length: 24 }, (_, i) => signRequest(dnsPacket.encode({
      type: 'query', id: 100 + i, flags: 5 << 11, questions: [{ name: 'workers.test', type: 'SOA', class: 'IN' }],
      authorities: [{ name: `u${i}.workers.test`, type: 'TXT', class: 'IN', ttl: 60, data: [`v${i}`] }],
    } as never), key, now).msg);
    const first = await Promise.all(msgs.map((m) => udpExchange(port, m, 10_000)));
    assert.deepEqual(first.map((r) => r.readUInt16BE(2) & 0xf), msgs.map(() => 0), 'every UPDATE answered NOERROR');
    const again = await Promise.all(msgs.map((m) => udpExchange(port, m, 10_000)));
    assert.deepEqual(again.map((r) => r.readUInt16BE(2) & 0xf), msgs.map(() => 5), 'each replay REFUSED, whichever thread got it');
    assert.deepEqual((await dig(port, ['u23.workers.test', 'TXT'])).answers, ['"v23"']);
    const perThread = (d.ports.dnsWorkerQueries as () => number[])();
    assert.ok(perThread.length === 3, String(perThread));
  } finally {
    await d.stop();
  }
});

test('dns.workers 2: a burst of dig and kdig queries is answered by the workers only; CHAOS version.gslb. too; TCP and simulate stay on the main thread', { skip, timeout: 60_000 }, async () => {
  const d = await startTestDaemon({ dns: { listenAddr: '127.0.0.1', port: 0, domain: 'burst.test', workers: 2 } as never });
  try {
    const port = d.ports.dnsPort as number;
    await makeService(d, { name: 'web', domain: 'www.burst.test.' }, [{ ipAddress: '192.0.2.9' }]);
    const counts = d.ports.dnsWorkerQueries as () => number[];
    const before = counts();
    // each dig and kdig process has its own source port: the burst spreads over the group
    const burst = await Promise.all(Array.from({ length: 24 }, (_, i) => dig(port, ['www.burst.test', 'A'], i % 2 === 0 ? 'dig' : 'kdig')));
    for (const r of burst) assert.deepEqual(r.answers, ['192.0.2.9']);
    const chaos = await dig(port, ['version.gslb.', 'TXT', 'CH']);
    assert.equal(chaos.status, 'NOERROR');
    assert.match(chaos.answers[0] ?? '', /revision=|commit=/, chaos.text);
    const after = counts();
    assert.equal(after.length, 3);
    assert.equal(after[0], before[0], 'the main thread answered none of the UDP queries');
    assert.equal(after.slice(1).reduce((a, b) => a + b, 0) - before.slice(1).reduce((a, b) => a + b, 0), 25, 'the workers answered all 25');
    // TCP and POST /simulate are answered by the main thread
    assert.deepEqual((await dig(port, ['www.burst.test', 'A', '+tcp'])).answers, ['192.0.2.9']);
    assert.equal(counts()[0], before[0]! + 1, 'the TCP query is the main thread\'s');
    const sim = await api(d.url, 'POST', '/api/v1/simulate', { name: 'www.burst.test', type: 'A', clientIp: '198.51.100.1' });
    assert.equal(sim.status, 200, JSON.stringify(sim.body));
  } finally {
    await d.stop();
  }
});

test('dns.workers 0: no worker thread, the main thread answers UDP', { skip, timeout: 60_000 }, async () => {
  const d = await startTestDaemon({ dns: { listenAddr: '127.0.0.1', port: 0, domain: 'single.test', workers: 0 } as never });
  try {
    await makeService(d, { name: 'web', domain: 'www.single.test.' }, [{ ipAddress: '192.0.2.5' }]);
    const counts = d.ports.dnsWorkerQueries as () => number[];
    assert.equal((d.ports.dnsWorkersRunning as () => number)(), 0);
    assert.ok(!d.logs.lines.some((l) => l.msg === 'dns workers answering'));
    const before = counts();
    const replies = await fromManyPorts(d.ports.dnsPort as number, 'www.single.test', 16);
    for (const r of replies) assert.deepEqual(r.answers, ['192.0.2.5']);
    assert.deepEqual(counts(), [before[0]! + 16], 'the main thread answered every query');
  } finally {
    await d.stop();
  }
});
