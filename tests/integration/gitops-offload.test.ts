import { test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { startTestDaemon, api } from '../helpers/daemon.js';
import { startGitFixture } from '../helpers/git-fixture.js';
import dnsPacket from 'dns-packet';
import { dig, udpExchange } from '../helpers/dns-tools.js';
import { batchSupport } from '../../runtime/dns/batch-socket.js';
import { repoFiles, rowsPerService, type RepoOptions } from '../bench/gitops-repo.js';
import { waitFor } from '../helpers/proc.js';
import { WAIT_CEILING_MS } from '../helpers/wait.js';
import { rowsOf } from '../../core/snapshot/snapshot.js';
import type { Row } from '../../core/model/types.js';

// docs/gitops.md "Off the DNS thread": a commit is loaded, validated and planned by the offload
// worker and applied in slices; REST writes sent meanwhile wait for the apply (never inside its
// transaction), and the database ends as the snapshot says. Real git (http-backend) and gpg.
const SERVICES = 2000;
// No health checks: the members (10.x.y.z) exist nowhere, and every answer below must hold all four
// whatever the host's routing would make of probes to them (tests/bench/gitops-repo.ts).
const REPO: RepoOptions = { healthChecks: false };
const ROWS = rowsPerService(REPO);
const files = (services: number, ttl = 60) => repoFiles(services, ttl, REPO);

test('a large reconcile off the DNS thread, with REST writes racing it', async (t) => {
  const fx = await startGitFixture();
  for (const f of files(10)) fx.repo.write(f.path, f.text);
  const small = fx.repo.commit('10 services', fx.ops);
  const d = await startTestDaemon({ gitops: fx.gitops, dns: { listenAddr: '127.0.0.1', port: 0, domain: 'bench.test' } as never });
  t.after(async () => { await d.stop(); await fx.close(); });
  // the reconcile at start applies the small commit; the large one comes after it
  await waitFor(async () => (await api(d.url, 'GET', '/api/v1/gitops/status')).body.lastAppliedRevision === small, WAIT_CEILING_MS, 50, 'the small commit applied at start',
    async () => (await api(d.url, 'GET', '/api/v1/gitops/status')).body);
  for (const f of files(SERVICES)) fx.repo.write(f.path, f.text);
  fx.repo.commit(`${SERVICES} services`, fx.ops);

  // REST writes every few ms until the reconcile answers; each must be applied, before or after it
  let done = false;
  const written: string[] = [];
  const writer = (async () => {
    for (let i = 0; !done && i < 2000; i++) {
      const r = await api(d.url, 'POST', '/api/v1/pools', { name: `rest-${i}` });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      written.push(r.body.id as string);
      await new Promise((res) => setTimeout(res, 5));
    }
  })();
  const t0 = performance.now();
  const s = (await api(d.url, 'POST', '/api/v1/gitops/reconcile', { force: true })).body;
  done = true;
  await writer;
  assert.equal(s.ready, true, s.message);
  assert.equal(s.lastPlan.create, (SERVICES - 10) * ROWS, 'pools, members and services');
  assert.ok(written.length > 3, `REST writes raced the reconcile (${written.length} in ${Math.round(performance.now() - t0)} ms)`);

  // planned by the worker, not here
  const offThread = d.logs.lines.filter((l) => l.msg === 'plan made off the DNS thread');
  assert.equal(offThread.at(-1)?.changes, (SERVICES - 10) * ROWS);
  // every REST pool is there; the database holds exactly the snapshot's rows
  const snap = d.core.holder.current;
  for (const id of written) assert.ok(rowsOf(snap, 'pool').has(id), `REST pool ${id} kept`);
  // byte for byte: the rows' text as stored is what stringifying the snapshot's rows gives
  const stored = new Map((d.core.db.prepare('SELECT kind, id, data FROM resources').all() as { kind: string; id: string; data: string }[]).map((r) => [`${r.kind}/${r.id}`, r.data]));
  const live = new Map<string, string>();
  for (const [, m] of snap.rows) for (const r of m.values()) live.set(`${r.kind}/${r.id}`, JSON.stringify(r as Row));
  assert.equal(stored.size, live.size);
  for (const [k, v] of live) assert.equal(stored.get(k), v, k);
  const a = await dig(d.ports.dnsPort as number, ['svc-1999.bench.test', 'A']);
  assert.equal(a.status, 'NOERROR');

  // a 1 % change of the same repo: only those rows, planned against the state the apply left
  for (const f of files(SERVICES, 30)) fx.repo.write(f.path, f.text);
  fx.repo.commit('ttl 30 for every 100th service', fx.ops);
  const s2 = (await api(d.url, 'POST', '/api/v1/gitops/reconcile', {})).body;
  assert.equal(s2.ready, true, s2.message);
  assert.deepEqual(s2.lastPlan, { create: 0, update: SERVICES / 100, delete: 0 });
  const ttl = await dig(d.ports.dnsPort as number, ['svc-100.bench.test', 'A']);
  assert.match(ttl.text, /svc-100\.bench\.test\.\s+30\s+IN\s+A/);
  // the same head again: nothing drifted, nothing to apply
  const s3 = (await api(d.url, 'POST', '/api/v1/gitops/reconcile', {})).body;
  assert.equal(s3.ready, true);
  assert.match(s3.message, /is applied; no drift/);
});

test('dns.workers 1: a large reconcile off the DNS thread reaches the worker thread as a staged index image, no resync', { skip: batchSupport().available ? false : 'udp batch addon unavailable', timeout: 120_000 }, async (t) => {
  const fx = await startGitFixture();
  for (const f of files(10)) fx.repo.write(f.path, f.text);
  const small = fx.repo.commit('10 services', fx.ops);
  const d = await startTestDaemon({ gitops: fx.gitops, dns: { listenAddr: '127.0.0.1', port: 0, domain: 'bench.test', workers: 1 } as never });
  t.after(async () => { await d.stop(); await fx.close(); });
  await waitFor(async () => (await api(d.url, 'GET', '/api/v1/gitops/status')).body.lastAppliedRevision === small, WAIT_CEILING_MS, 50, 'the small commit applied at start',
    async () => (await api(d.url, 'GET', '/api/v1/gitops/status')).body);
  for (const f of files(SERVICES)) fx.repo.write(f.path, f.text);
  fx.repo.commit(`${SERVICES} services`, fx.ops);
  const s = (await api(d.url, 'POST', '/api/v1/gitops/reconcile', { force: true })).body;
  assert.equal(s.ready, true, s.message);
  assert.equal(s.lastPlan.create, (SERVICES - 10) * ROWS);
  // services of the import, asked from many source ports until the worker answered (bounded); the main thread answers none
  const counts = d.ports.dnsWorkerQueries as () => number[];
  const before = counts();
  for (let round = 0; ; round++) {
    await Promise.all(Array.from({ length: 32 }, async (_, i) => {
      const n = (round * 32 + i) * 37 % SERVICES;
      const p = Math.floor(n / 10);
      const reply = dnsPacket.decode(await udpExchange(d.ports.dnsPort as number, dnsPacket.encode({ type: 'query', id: i, flags: 0, questions: [{ name: `svc-${n}.bench.test`, type: 'A' }] })));
      const got = (reply.answers ?? []).map((a) => String((a as { data?: unknown }).data)).sort();
      assert.deepEqual(got, [1, 2, 3, 4].map((m) => `10.${(p >> 8) & 255}.${p & 255}.${m}`), `svc-${n}`);
    }));
    if (counts()[1]! > before[1]!) break;
    assert.ok(round < 10, `the worker answered within 10 rounds (${counts().join(', ')})`);
  }
  assert.equal(counts().length, 2);
  assert.equal(counts()[0], before[0], 'the main thread answered no UDP query');
  const trouble = d.logs.lines.filter((l) => /resync|not staged|could not/.test(String(l.msg)));
  assert.deepEqual(trouble, [], 'the worker took the staged image');
});
