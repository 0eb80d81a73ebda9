// test-timeout: 240000
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestDaemon } from '../helpers/daemon.js';
import { dig } from '../helpers/dns-tools.js';
import { planChanges } from '../../core/plan/plan.js';
import type { DesiredRow } from '../../core/plan/types.js';
import { DEFAULT_TENANT } from '../../core/model/types.js';
import { batchSupport } from '../../runtime/dns/batch-socket.js';
import { threadCpuMs } from '../helpers/cpu.js';

// A REST write applies in one turn, but with a large state the DNS zone index it needs is built in
// slices afterwards while the previous index keeps answering, on the main thread and on each DNS
// worker thread; the write's response waits for it (docs/dns.md "Large states").

const SERVICES = 20_000;

test('a REST write into 20,000 services: its turn does not build the whole index, and the response waits for the new one', { skip: batchSupport().available ? false : 'udp batch addon unavailable (workers need it)' }, async () => {
  const d = await startTestDaemon({ dns: { listenAddr: '127.0.0.1', port: 0, domain: 'big.test', workers: 1 } as never });
  try {
    // the large state, written as one plan (what a git import applies), rows with the fields the REST API gives them
    const desired: DesiredRow[] = [];
    for (let i = 0; i < SERVICES; i++) {
      desired.push({ kind: 'pool', key: `p${i}`, fields: { name: `p${i}` }, source: 'bench' });
      desired.push({ kind: 'member', key: `p${i}/m`, fields: { ipAddress: `10.${(i >> 8) & 255}.${i & 255}.1`, port: 80, enabled: true }, refs: [{ field: 'poolId', kind: 'pool', key: `p${i}` }], source: 'bench' } as DesiredRow);
      desired.push({ kind: 'service', key: `s${i}`, fields: { name: `s${i}`, domain: `h${i}.big.test.`, algorithm: 'round-robin', ttl: 60, chain: [], whenAllUnhealthy: 'all', asnRules: [] }, refs: [{ field: 'poolId', kind: 'pool', key: `p${i}` }], source: 'bench' } as DesiredRow);
    }
    const plan = planChanges({ desired, actual: d.core.holder.current, revision: 'import', newId: () => d.core.newId(), tenantId: DEFAULT_TENANT, safety: d.core.config.gitops.safety });
    await d.core.applySliced(plan, { force: true });
    await d.core.ports.applySettled?.();
    assert.deepEqual((await dig(d.ports.dnsPort as number, ['h123.big.test', 'A'])).answers, ['10.0.123.1']);

    // what one whole build of the index costs here, in one turn (this thread's CPU time: a loaded
    // machine's pauses are not work)
    const a = d.core.ports.dnsAnswerer!;
    const t0 = threadCpuMs();
    for (const steps = a.indexSteps(d.core.holder.current, (d.core.ports.dnsSerial?.() ?? 0) + 1); !steps.next().done;) { /* one turn */ }
    const wholeBuild = threadCpuMs() - t0;

    // A REST write: how long the turn of its swap spends between the apply hooks' afterSwap and
    // the end of the plan_applied listeners (the DNS part's among them; this one is the last).
    let swapAt = 0;
    let spent = -1;
    const offHook = d.core.applyHooks.add({ afterSwap: () => { swapAt = threadCpuMs(); } });
    const offBus = d.core.bus.on('plan_applied', () => { spent = Math.max(spent, threadCpuMs() - swapAt); });
    const pool = await api(d.url, 'POST', '/api/v1/pools', { name: 'new' });
    await api(d.url, 'POST', `/api/v1/pools/${pool.body.id}/members`, { ipAddress: '192.0.2.77', port: 80 });
    const svc = await api(d.url, 'POST', '/api/v1/services', { name: 'new', domain: 'new.big.test.', poolId: pool.body.id });
    offHook();
    offBus();
    assert.equal(svc.status, 201, JSON.stringify(svc.body));
    assert.ok(spent >= 0 && spent < wholeBuild * 0.5, `the swap's turn spent ${spent.toFixed(1)} ms after the swap; a whole index build takes ${wholeBuild.toFixed(1)} ms`);

    // the response came after the new index: every thread answers the new name at once
    for (let i = 0; i < 16; i++) assert.deepEqual((await dig(d.ports.dnsPort as number, ['new.big.test', 'A'])).answers, ['192.0.2.77'], `query ${i}`);
    const counts = d.ports.dnsWorkerQueries as () => number[];
    assert.equal(counts().length, 2);
  } finally {
    await d.stop();
  }
});
