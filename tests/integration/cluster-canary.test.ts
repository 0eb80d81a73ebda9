/**
 * Canary apply end to end (docs/gitops.md "Canary apply"): a signed config repo served by `git
 * http-backend`, `nats-server -js`, and three gslbd processes with config sync, `a` the canary
 * node. A good revision is served by `a` alone during the bake, then by every node; a bad one
 * (its member's health check aims at a closed port, so `a`'s healthy share falls) is aborted:
 * `b` and `c` never serve it, `a` returns to the previous rows, and the leader refuses it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startNats, stopAllNats, spawnGslbd, stopAllGslbd, call, waitFor, type GslbdNode } from '../helpers/nats.js';
import { startGitFixture, type GitFixture } from '../helpers/git-fixture.js';
import { dig } from '../helpers/dns-tools.js';
import { freePort } from '../helpers/proc.js';
import { documentChecker } from '../helpers/openapi-check.js';
import { Recorder } from '../helpers/recorder.js';
import { WAIT_CEILING_MS } from '../helpers/wait.js';

const KEY = 'c'.repeat(64);
const H = { authorization: `Bearer ${KEY}` };
const ENV = { GSLB_API_KEY: KEY, GSLB_SECRET_KEY: '7'.repeat(64) };
// Long enough that the checks made during the bake normally fall inside it; a check that a loaded
// machine made late (the leader no longer baking) is not held against the code (see duringBake).
const BAKE_MS = 8_000;
const STATE = { enableConfigSync: true, heartbeatInterval: '300ms', heartbeatTTL: '3s', config: { applyTimeout: '3s' } };

let fx: GitFixture;
let a: GslbdNode, b: GslbdNode, c: GslbdNode;
let first = '', good = '';
let check: ReturnType<typeof documentChecker>;
const metricsPorts = new Map<string, number>();
const alerts = new Recorder();
let alertsUrl = '';

const get = async (n: GslbdNode, path: string) => {
  const r = await call(n.url, 'GET', path, undefined, H);
  assert.equal(r.status, 200, `${n.id} GET ${path}: ${JSON.stringify(r.body)}`);
  return r.body;
};
/** GET /cluster or /gitops/status, its body checked against the daemon's OpenAPI document. */
const status = async (n: GslbdNode, path: '/cluster' | '/gitops/status') => {
  const body = await get(n, `/api/v1${path}`);
  const v = check('GET', `/api/v1${path}`, 200, body);
  assert.equal(v, undefined, v);
  return body;
};
/** The commit a node serves, from `dig CH TXT version.gslb.` (docs/gitops.md "Provenance"). */
const commitOf = async (n: GslbdNode) => /commit=(\S+)/.exec((await dig(n.dnsPort, ['version.gslb.', 'TXT', 'CH'])).answers[0] ?? '')?.[1];
const answerOf = async (n: GslbdNode) => (await dig(n.dnsPort, ['www.canary.test.', 'A'])).answers.join(',');
/** The answer with its status when it is not a plain NOERROR (for the failure messages). */
const answerWithStatus = async (n: GslbdNode) => {
  const r = await dig(n.dnsPort, ['www.canary.test.', 'A']);
  return r.status === 'NOERROR' ? r.answers.join(',') : `${r.status} ${r.answers.join(',')}`;
};
const rowsOf = async (n: GslbdNode) => {
  const pools = (await get(n, '/api/v1/pools')) as { id: string; name: string }[];
  const out: unknown[] = [];
  for (const p of pools.sort((x, y) => x.id.localeCompare(y.id))) {
    out.push(p, await get(n, `/api/v1/pools/${p.id}/members`), (await call(n.url, 'GET', `/api/v1/pools/${p.id}/healthcheck`, undefined, H)).body);
  }
  return JSON.stringify(out);
};
/** gslbd_gitops_canary_total by result, summed over the three nodes (each decision is counted on the node that made it). */
const canaryCounts = async () => {
  const sum: Record<string, number> = {};
  for (const n of [a, b, c]) {
    const text = await (await fetch(`http://127.0.0.1:${metricsPorts.get(n.id)}/metrics`)).text();
    for (const m of text.matchAll(/^gslbd_gitops_canary_total\{[^}]*result="(\w+)"[^}]*\} (\d+)$/gm)) sum[m[1]!] = (sum[m[1]!] ?? 0) + Number(m[2]);
  }
  return sum;
};
const leader = async () => {
  for (const n of [b, a, c]) if ((await get(n, '/api/v1/cluster')).gitLeader.holds) return n;
  return undefined;
};
/**
 * A reconcile on the node holding the git lease. The lease can move between the look-up and the
 * call (a loaded runner may hold a renewal back past the lease time): an answer of NotLeader is
 * asked again of the node that holds it then, for at most 10 s.
 */
const reconcile = async () => waitFor('a reconcile on the git leader', async () => {
  const n = await waitFor('a git leader', leader, 10_000, 50);
  const r = await call(n.url, 'POST', '/api/v1/gitops/reconcile', {}, H);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  if (r.body.reason === 'NotLeader') throw new Error(`${n.id} answered NotLeader`);
  return { leaderNode: n, body: r.body };
}, 10_000, 100);

const pool = (member: string, healthCheck = '') => `apiVersion: gslb/v1
kind: Pool
metadata: {name: web}
spec:
  members:
    - {ipAddress: ${member}, port: 80}
${healthCheck}`;

before(async () => {
  fx = await startGitFixture({ gitops: { canary: { nodes: ['a'], bakeTime: `${BAKE_MS / 1000}s` } } });
  fx.repo.write('pools/web.yaml', pool('127.0.0.1'));
  fx.repo.write('services/www.yaml', 'apiVersion: gslb/v1\nkind: Service\nmetadata: {name: www}\nspec: {domain: www.canary.test., pool: web}\n');
  first = fx.repo.commit('web on 127.0.0.1', fx.ops);
  const nats = await startNats();
  const state = { ...STATE, nats: { servers: [nats.url] } };
  alertsUrl = await alerts.start();
  const hook = `${alertsUrl}/hook`;
  const spawn = async (id: string) => {
    metricsPorts.set(id, await freePort());
    const extra = { gitops: fx.gitops, metrics: { enablePrometheus: true, listenAddr: '127.0.0.1', port: metricsPorts.get(id) }, alerts: { webhooks: [{ url: hook }] } };
    return spawnGslbd(id, state, extra, ENV);
  };
  // b first, so that the git leader is a node that is not a canary node
  b = await spawn('b');
  await waitFor('b holds the git lease', async () => (await get(b, '/api/v1/cluster')).gitLeader.holds, 15_000, 50);
  [a, c] = await Promise.all([spawn('a'), spawn('c')]);
  check = documentChecker((await call(b.url, 'GET', '/api/v1/openapi.json')).body);
  for (const n of [a, b, c]) await waitFor(`${n.id} sees 3 nodes`, async () => (await get(n, '/api/v1/cluster')).liveNodes.length === 3, 15_000);
});

after(async () => {
  await stopAllGslbd();
  await stopAllNats();
  await alerts.stop();
  await fx?.close();
});

test('the first revision has nothing to return to: it is applied on every node at once', async () => {
  const { body } = await reconcile();
  assert.equal(body.ready, true, body.message);
  assert.equal(body.lastAppliedRevision, first);
  for (const n of [a, b, c]) {
    await waitFor(`${n.id} serves the first revision`, async () => (await commitOf(n)) === first && (await answerOf(n)) === '127.0.0.1', 10_000);
  }
});

test('a good revision is served by the canary node first, and by the others only after the bake', async () => {
  // an alert-target row (made on c, replicated) that subscribes to applied revisions
  const row = await call(c.url, 'POST', '/api/v1/alert-targets', { name: 'applies', type: 'webhook', webhook: { url: `${alertsUrl}/rows` }, events: ['apply'] }, H);
  assert.equal(row.status, 201, JSON.stringify(row.body));
  for (const n of [a, b]) await waitFor(`${n.id} has the alert target`, async () => (await get(n, '/api/v1/alert-targets')).some((t: { name: string }) => t.name === 'applies'), 10_000, 50);
  fx.repo.write('pools/web.yaml', pool('127.0.0.2'));
  good = fx.repo.commit('web moves to 127.0.0.2', fx.ops);
  const { leaderNode, body } = await reconcile();
  assert.equal(body.reason, 'CanaryBaking', body.message);
  assert.equal(body.errorClass, 'waiting');
  assert.equal(body.lastAppliedRevision, first, 'the leader did not apply it first');

  await waitFor('a serves the canary revision', async () => (await commitOf(a)) === good && (await answerOf(a)) === '127.0.0.2', 10_000, 20);
  const seenOnA = Date.now();
  // during the bake b and c still serve the previous revision, and hold the canary plan; what was
  // read of a node counts only if the leader still bakes after it was read (then it was read
  // during the bake, whatever the machine's speed)
  const duringBake = async () => (await status(leaderNode, '/gitops/status')).canary?.phase === 'baking';
  let checked = 0;
  for (const n of [b, c]) {
    const seen = { commit: await commitOf(n), answer: await answerOf(n), holding: (await status(n, '/cluster')).config.holding?.revision };
    if (!(await duringBake())) continue;
    checked++;
    assert.deepEqual(seen, { commit: first, answer: '127.0.0.1', holding: good }, `${n.id} during the bake: the previous revision served, the canary plan held`);
  }
  if (checked < 2) console.log(`# canary: ${2 - checked} of b and c read after the bake ended (a loaded machine): not checked`);
  const baking = (await waitFor('a reports the revision applied', async () => {
    const s = await status(leaderNode, '/gitops/status');
    return s.canary?.verdicts[0]?.applied && s;
  }, 5_000, 50)).canary;
  assert.equal(baking.revision, good);
  assert.ok(['baking', 'promoted'].includes(baking.phase), baking.phase);
  assert.deepEqual(baking.nodes, ['a']);
  assert.equal(baking.previous, first);
  assert.equal(baking.until, baking.verdicts[0].appliedAt + BAKE_MS);
  assert.deepEqual({ ...baking.verdicts[0], appliedAt: 0 }, { node: 'a', live: true, applied: true, appliedAt: 0, healthyShare: 1, servfailRate: 0, queries: baking.verdicts[0].queries, breach: null });

  for (const n of [b, c]) await waitFor(`${n.id} serves the promoted revision`, async () => (await commitOf(n)) === good && (await answerOf(n)) === '127.0.0.2', BAKE_MS + 10_000, 50);
  const fanOut = Date.now() - seenOnA;
  console.log(`canary: promoted revision reached b and c ${fanOut} ms after a served it (bake ${BAKE_MS} ms)`);
  assert.ok(fanOut >= BAKE_MS - 1_000, `fan-out after ${fanOut} ms, before the bake of ${BAKE_MS} ms ended`);

  const done = await waitFor('the leader is ready on the promoted revision', async () => {
    const s = await status(leaderNode, '/gitops/status');
    return s.ready && s;
  }, 5_000, 50);
  assert.equal(done.lastAppliedRevision, good);
  assert.equal(done.canary.phase, 'promoted');
  assert.equal(done.canary.reason, null);
  const [ra, rb, rc] = await Promise.all([a, b, c].map(rowsOf));
  assert.equal(ra, rb);
  assert.equal(rb, rc);
  for (const n of [a, b, c]) assert.equal((await status(n, '/cluster')).config.holding, undefined, `${n.id} holds nothing`);
  assert.deepEqual(await canaryCounts(), { started: 1, promoted: 1 });
  // announced once in the cluster, by the leader, with the plan's counts
  const applied = await waitFor('the applied alert', () => alerts.requests.find((r) => r.url === '/rows' && r.json?.type === 'gitops_applied' && r.json.revision === good)?.json, 5_000, 50);
  assert.equal(applied.updates + applied.creates + applied.deletes > 0, true, JSON.stringify(applied));
  await new Promise((r) => setTimeout(r, 500)); // a window for a second alert, which must not come
  assert.equal(alerts.requests.filter((r) => r.url === '/rows' && r.json?.type === 'gitops_applied' && r.json.revision === good).length, 1, 'one applied alert for the cluster');
  // every node records the commit's facts with the revision, also the ones that got it from the stream
  const hist = (await get(c, '/api/v1/gitops/history?limit=1'))[0];
  assert.equal(hist.sha, good);
  assert.equal(hist.message, 'web moves to 127.0.0.2');
  assert.equal(hist.signer, fx.ops.fingerprint);
});

test('a bad revision breaches on the canary node: b and c never serve it, a returns to the previous rows, the leader refuses it', async () => {
  const closed = await freePort();
  fx.repo.write('pools/web.yaml', pool('127.0.0.3', `  healthCheck: {type: tcp, port: ${closed}, intervalMs: 200, timeoutMs: 100}\n`));
  const bad = fx.repo.commit('web moves to 127.0.0.3, checked on a closed port', fx.ops);
  const rowsBefore = await rowsOf(b);

  // watch b and c for the whole run: not one answer of the bad revision
  const seen: string[] = [];
  let samples = 0;
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      for (const n of [b, c]) {
        const [commit, answer] = await Promise.all([commitOf(n), answerWithStatus(n)]);
        // a version query that got no answer (dig gave up on a loaded machine) says nothing
        // about the revision served: not a sample, not a breach
        if (commit === undefined) continue;
        samples++;
        if (commit !== good || answer !== '127.0.0.2') seen.push(`${n.id}: commit=${commit} answer=${answer}`);
      }
    }
  })();
  try {
    const { leaderNode, body } = await reconcile();
    assert.equal(body.reason, 'CanaryBaking', body.message);
    const refused = await waitFor('the leader refuses the revision', async () => {
      const s = await status(leaderNode, '/gitops/status');
      return s.reason === 'CanaryFailed' && s;
    }, BAKE_MS + 10_000, 50);
    assert.equal(refused.errorClass, 'stalled');
    assert.match(refused.message, new RegExp(`the canary of revision ${bad.slice(0, 12)} was aborted: node a: healthy members 0/1 \\(0%\\) below minHealthyShare 50%`));
    assert.equal(refused.lastAppliedRevision, good);
    assert.equal(refused.canary.revision, bad);
    assert.equal(refused.canary.phase, 'aborted');
    assert.match(refused.canary.reason, /^node a: healthy members 0\/1/);
    assert.deepEqual([refused.canary.verdicts[0].node, refused.canary.verdicts[0].applied, refused.canary.verdicts[0].healthyShare], ['a', true, 0], 'a applied it, and its healthy share fell');
    assert.equal(refused.recentRejections[0].sha, bad);
    assert.equal(refused.recentRejections[0].reason, 'CanaryFailed');

    // one alert, from the leader: the revision was refused, with the breach
    const alert = await waitFor('the CanaryFailed alert', () => alerts.requests.find((r) => r.json?.type === 'gitops_rejected' && r.json.revision === bad)?.json, 10_000, 50);
    assert.equal(alert.reason, 'CanaryFailed');
    assert.match(alert.message, /node a: healthy members 0\/1/);
        await waitFor('a returns to the previous revision', async () => (await commitOf(a)) === good && (await answerOf(a)) === '127.0.0.2', 10_000, 20);
    // a applied the bad revision, then the undo, recorded as the revision it returned to
    const hist = (await get(a, '/api/v1/gitops/history?limit=2')) as { sha: string; trigger: string | null }[];
    assert.deepEqual(hist.map((h) => [h.sha, h.trigger]), [[good, 'canary-abort'], [bad, 'manual']]);
    // every node knows the outcome
    for (const n of [a, c]) await waitFor(`${n.id} knows the abort`, async () => (await status(n, '/cluster')).canary?.phase === 'aborted', 5_000, 50);
    // the refused head is not tried again
    const again = await call(leaderNode.url, 'POST', '/api/v1/gitops/reconcile', {}, H);
    assert.equal(again.body.reason, 'CanaryFailed');
    assert.equal(await commitOf(a), good);
  } finally {
    // the abort can come within half a second: b and c are watched until they gave at least 10
    // answered samples (at most a minute more; they must never serve the bad revision, then or after)
    for (const t0 = Date.now(); samples < 10 && Date.now() - t0 < 2 * WAIT_CEILING_MS;) await new Promise((r) => setTimeout(r, 50));
    watching = false;
    await watcher;
  }
  assert.deepEqual(await canaryCounts(), { started: 2, promoted: 1, aborted: 1 });
  assert.ok(samples >= 10, `only ${samples} samples of b and c`);
  assert.equal(alerts.requests.filter((r) => r.json?.type === 'gitops_rejected').length, 1, 'one rejection alert for the cluster');
  assert.deepEqual(seen, [], 'b and c served the aborted revision');
  const [ra, rb, rc] = await Promise.all([a, b, c].map(rowsOf));
  assert.equal(rb, rowsBefore, 'b never changed');
  assert.equal(ra, rb, 'a has the rows b and c have');
  assert.equal(rc, rb);
});
