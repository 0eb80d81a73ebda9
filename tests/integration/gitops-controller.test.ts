import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startTestDaemon, api, type TestDaemon } from '../helpers/daemon.js';
import { startGitFixture, type GitFixture } from '../helpers/git-fixture.js';
import { rowsOf } from '../../core/snapshot/snapshot.js';
import type { MemberRow, PoolRow } from '../../core/model/types.js';
import { planChanges } from '../../core/plan/plan.js';
import { gslbctl } from '../helpers/gslbctl.js';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

const EXAMPLE = join(import.meta.dirname, '../../examples/config-repo');

describe('gitops controller against a real git http-backend', () => {
  let fx: GitFixture;
  let d: TestDaemon;
  const rejected: { revision: string; reason: string }[] = [];
  const ws: { type: string; payload: unknown }[] = [];
  let good = '';

  const reconcile = async (force = false) => (await api(d.url, 'POST', '/api/v1/gitops/reconcile', { force })).body;
  const pools = () => [...rowsOf<PoolRow>(d.core.holder.current, 'pool').values()].map((p) => p.name).sort();
  const members = () => [...rowsOf<MemberRow>(d.core.holder.current, 'member').values()].map((m) => `${m.ipAddress}:${m.port}`).sort();

  /** Asserts a refused head: reason in status, event raised, state (snapshot) untouched. */
  async function expectRefused(reason: string) {
    const before = d.core.holder.current;
    const n = rejected.length;
    const s = await reconcile();
    assert.equal(s.ready, false);
    assert.equal(s.reason, reason, s.message);
    assert.equal(s.errorClass, 'stalled');
    assert.equal(d.core.holder.current, before, 'a refused revision must not swap the snapshot');
    assert.equal(s.lastAppliedRevision, good);
    assert.equal(rejected.length, n + 1);
    assert.equal(rejected.at(-1)!.reason, reason);
    assert.equal(rejected.at(-1)!.revision, fx.repo.head());
    return s;
  }

  before(async () => {
    fx = await startGitFixture();
    fx.copyTree(EXAMPLE);
    good = fx.repo.commit('Add the example config', fx.ops);
    d = await startTestDaemon({ gitops: fx.gitops }, { GITOPS_WEBHOOK_SECRET: fx.webhookSecret });
    d.core.bus.on('gitops_rejected', (e) => rejected.push(e));
    d.core.bus.on('ws_message', (m) => ws.push(m));
  });
  after(async () => {
    await d?.stop();
    await fx?.close();
  });

  it('applies a signed commit and records signer, author, committer and message', async () => {
    const s = await reconcile();
    assert.equal(s.ready, true, s.message);
    assert.equal(s.lastAppliedRevision, good);
    assert.deepEqual(pools(), ['eu-west', 'global-web', 'us-east']);
    const list = (await api(d.url, 'GET', '/api/v1/pools')).body as { name: string; origin: string; source: string; revision: string }[];
    assert.ok(list.every((p) => p.origin === 'git' && p.revision === good));
    assert.equal(list.find((p) => p.name === 'eu-west')!.source, 'pools/eu-west.yaml');
    const h = (await api(d.url, 'GET', '/api/v1/gitops/history')).body;
    assert.equal(h[0].sha, good);
    assert.equal(h[0].signer, fx.ops.fingerprint);
    assert.equal(h[0].author, 'Ops Engineer <ops@example.test>');
    assert.equal(h[0].committer, 'Ops Engineer <ops@example.test>');
    assert.equal(h[0].message, 'Add the example config');
    assert.equal(h[0].creates, 17);
    const metrics = await d.core.metrics.metrics();
    assert.match(metrics, new RegExp(`gslbd_gitops_last_apply_info\\{sha="${good}",signer="${fx.ops.fingerprint}"`));
    assert.match(metrics, /gslbd_gitops_apply_total\{result="success"[^}]*\} 1/);
    assert.match(metrics, /gslbd_gitops_commit_to_serving_seconds_count\{[^}]*\} 1/);
  });

  it('answers 409 naming the file and commit to a REST write on a git-owned pool', async () => {
    const pool = [...rowsOf<PoolRow>(d.core.holder.current, 'pool').values()].find((p) => p.name === 'eu-west')!;
    const put = await api(d.url, 'PUT', `/api/v1/pools/${pool.id}`, { name: 'renamed' });
    assert.equal(put.status, 409);
    assert.match(put.body.error, /pools\/eu-west\.yaml/);
    assert.match(put.body.error, new RegExp(good.slice(0, 12)));
    const del = await api(d.url, 'DELETE', `/api/v1/pools/${pool.id}`);
    assert.equal(del.status, 409);
    const add = await api(d.url, 'POST', `/api/v1/pools/${pool.id}/members`, { ipAddress: '192.0.2.99', port: 80 });
    assert.equal(add.status, 409);
    assert.deepEqual(pools(), ['eu-west', 'global-web', 'us-east']);
  });

  it('refuses an unsigned commit and keeps serving the old state', async () => {
    fx.repo.write('pools/extra.yaml', 'apiVersion: gslb/v1\nkind: Pool\nmetadata: {name: extra}\nspec: {}\n').commit('unsigned change');
    await expectRefused('SignatureMissing');
    assert.deepEqual(pools(), ['eu-west', 'global-web', 'us-east']);
    const wsMsg = ws.filter((m) => m.type === 'gitops_rejected').at(-1);
    assert.equal((wsMsg?.payload as { reason: string }).reason, 'SignatureMissing');
    assert.match(await d.core.metrics.metrics(), /gslbd_gitops_rejected_total\{reason="SignatureMissing"[^}]*\} 1/);
    assert.ok(d.logs.lines.some((l) => l.reason === 'SignatureMissing' && l.level === 40), 'a warn log line names the reason');
    const cli = await gslbctl(['status', '--server', d.url]);
    assert.equal(cli.code, 1);
    assert.match(cli.stdout, /Ready:\s+False \(SignatureMissing, stalled\)/);
    // an unchanged refused head is not re-checked (or re-announced) every poll
    const n = rejected.length;
    await reconcile();
    assert.equal(rejected.length, n);
    fx.repo.resetTo(good);
  });

  it('refuses a commit signed by a key that is not in allowedSigners', async () => {
    fx.repo.write('pools/extra.yaml', 'apiVersion: gslb/v1\nkind: Pool\nmetadata: {name: extra}\nspec: {}\n').commit('mallory was here', fx.mallory);
    const s = await expectRefused('SignerNotAllowed');
    assert.match(s.message, new RegExp(fx.mallory.fingerprint));
    fx.repo.resetTo(good);
  });

  it('refuses a tampered commit (content changed under the original signature)', async () => {
    const signed = fx.repo.write('pools/extra.yaml', 'apiVersion: gslb/v1\nkind: Pool\nmetadata: {name: extra}\nspec: {}\n').commit('add extra', fx.ops);
    const forged = fx.repo.tamper(signed, (raw) => raw.replace('add extra', 'add extra and more'));
    assert.notEqual(forged, signed);
    await expectRefused('SignatureInvalid');
    assert.deepEqual(pools(), ['eu-west', 'global-web', 'us-east']);
    fx.repo.resetTo(good);
  });

  it('refuses a history rewind', async () => {
    const next = fx.repo.write('pools/extra.yaml', 'apiVersion: gslb/v1\nkind: Pool\nmetadata: {name: extra}\nspec: {}\n').commit('add pool extra', fx.ops);
    const s1 = await reconcile();
    assert.equal(s1.ready, true, s1.message);
    assert.equal(s1.lastAppliedRevision, next);
    good = next;
    assert.deepEqual(pools(), ['eu-west', 'extra', 'global-web', 'us-east']);
    // force-push a signed branch that does not contain the applied commit
    fx.repo.resetTo(`${next}~1`);
    fx.repo.write('pools/other.yaml', 'apiVersion: gslb/v1\nkind: Pool\nmetadata: {name: other}\nspec: {}\n').commit('rewritten history', fx.ops);
    const s = await expectRefused('HistoryRewound');
    assert.match(s.message, /does not descend/);
    assert.deepEqual(pools(), ['eu-west', 'extra', 'global-web', 'us-east']);
    fx.repo.resetTo(next);
  });

  it('reports every invalid YAML and schema error with file:line and changes nothing', async () => {
    fx.repo.write('pools/broken.yaml', 'apiVersion: gslb/v1\nkind: Pool\nmetadata:\n  name: broken\nspec:\n  members: [\n');
    fx.repo.write('pools/bad-port.yaml', 'apiVersion: gslb/v1\nkind: Pool\nmetadata:\n  name: bad-port\nspec:\n  members:\n    - ipAddress: 10.0.0.1\n      port: 70000\n');
    fx.repo.write('services/dangling.yaml', 'apiVersion: gslb/v1\nkind: Service\nmetadata:\n  name: dangling\nspec:\n  domain: dangling.example.test.\n  pool: nowhere\n');
    fx.repo.commit('broken manifests', fx.ops);
    const s = await expectRefused('ManifestsInvalid');
    const problems = s.problems as string[];
    assert.ok(problems.some((p) => /^pools\/bad-port\.yaml:8:13: spec\.members\.0\.port = 70000: must be <= 65535 \(range\)$/.test(p)), problems.join('\n'));
    assert.ok(problems.some((p) => p.startsWith('pools/broken.yaml:')), problems.join('\n'));
    assert.ok(problems.some((p) => p.startsWith('services/dangling.yaml:7:9: spec.pool = "nowhere"')), problems.join('\n'));
    const cli = await gslbctl(['status', '--server', d.url]);
    assert.match(cli.stdout, /pools\/bad-port\.yaml:8:/);
    fx.repo.resetTo(good);
  });

  it('holds back a delete above the safety threshold until forced', async () => {
    fx.repo.remove('pools/us-east.yaml').remove('pools/global-web.yaml').remove('services/global.yaml');
    fx.repo.write('services/www.yaml', 'apiVersion: gslb/v1\nkind: Service\nmetadata: {name: www}\nspec:\n  domain: www.example.test.\n  pool: eu-west\n');
    const sha = fx.repo.commit('retire the US region', fx.ops);
    const s = await expectRefused('TooManyDeletes');
    assert.match(s.message, /deletes \d+ of \d+ existing/);
    // the held plan is shown as the diff a forced reconcile would apply
    assert.equal(s.pendingPlan.revision, sha);
    assert.equal(s.pendingPlan.reason, 'TooManyDeletes');
    assert.ok(s.pendingPlan.counts.delete > 0);
    assert.match(s.pendingPlan.text, /^--- live\/pool\/us-east$/m);
    assert.deepEqual(pools(), ['eu-west', 'extra', 'global-web', 'us-east']);
    const forced = await reconcile(true);
    assert.equal(forced.ready, true, forced.message);
    assert.equal(forced.lastAppliedRevision, sha);
    assert.equal(forced.pendingPlan, null);
    assert.deepEqual(pools(), ['eu-west', 'extra']);
    const h = (await api(d.url, 'GET', '/api/v1/gitops/history')).body;
    assert.equal(h[0].forced, true);
    good = sha;
  });

  it('takes a member removed in git out of DNS in the same swap, triggered by the push webhook', async () => {
    assert.ok(members().includes('127.0.0.11:8081'));
    fx.repo.write('pools/eu-west.yaml', (await import('node:fs')).readFileSync(join(EXAMPLE, 'pools/eu-west.yaml'), 'utf8').replace(/    - ipAddress: 127\.0\.0\.11\n      port: 8081\n      weight: 1\n      priority: 2\n/, ''));
    const sha = fx.repo.commit('drain 127.0.0.11', fx.ops);
    const swapped = new Promise<{ members: string[]; revision: string }>((resolve) => {
      const off = d.core.bus.on('plan_applied', (e) => {
        off();
        resolve({ members: [...rowsOf<MemberRow>(e.snapshot, 'member').values()].map((m) => `${m.ipAddress}:${m.port}`), revision: e.snapshot.revision });
      });
    });
    // a bad HMAC is refused and triggers nothing
    const bad = fx.webhook('github', 'wrong-secret');
    assert.equal((await api(d.url, 'POST', '/api/v1/gitops/webhook', bad.body, bad.headers)).status, 401);
    const hook = fx.webhook('gitea');
    const res = await api(d.url, 'POST', '/api/v1/gitops/webhook', hook.body, hook.headers);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const e = await swapped;
    assert.equal(e.revision, sha);
    assert.ok(!e.members.includes('127.0.0.11:8081'), 'the removed member is gone from the swapped snapshot');
    assert.ok(e.members.includes('127.0.0.10:8081'));
    const pool = [...rowsOf<PoolRow>(d.core.holder.current, 'pool').values()].find((p) => p.name === 'eu-west')!;
    const listed = (await api(d.url, 'GET', `/api/v1/pools/${pool.id}/members`)).body as { ipAddress: string }[];
    assert.deepEqual(listed.map((m) => m.ipAddress), ['127.0.0.10']);
    const dnsPort = d.ports.dnsPort as number | undefined;
    if (dnsPort) {
      const { stdout } = await run('dig', ['@127.0.0.1', '-p', String(dnsPort), '+short', '+time=2', '+tries=1', 'www.example.test', 'A']);
      assert.ok(!stdout.includes('127.0.0.11'), stdout);
    }
    assert.match(await d.core.metrics.metrics(), /gslbd_gitops_commit_to_serving_seconds_count\{[^}]*trigger="webhook"[^}]*\} 1/);
    good = sha;
  });

  it('detects drift on git rows and corrects it', async () => {
    const m = [...rowsOf<MemberRow>(d.core.holder.current, 'member').values()].find((x) => x.ipAddress === '127.0.0.10')!;
    // a change behind the controller's back: same revision, different weight
    const s0 = d.core.holder.current;
    const desired = [...rowsOf(s0, 'pool').values(), ...rowsOf(s0, 'member').values(), ...rowsOf(s0, 'service').values(), ...rowsOf(s0, 'healthcheck').values(), ...rowsOf(s0, 'georule').values()]
      .filter((r) => r.origin === 'git')
      .map((r) => {
        const { id: _i, kind, origin: _o, revision: _r, source, key, tenantId: _t, ...fields } = r as unknown as Record<string, unknown>;
        return { kind: kind as string, key: key as string, source: source as string, fields: r.id === m.id ? { ...fields, weight: 42 } : fields };
      });
    d.core.apply(planChanges({ desired, actual: s0, revision: good, newId: () => 'x', tenantId: 'default' }));
    assert.equal(rowsOf<MemberRow>(d.core.holder.current, 'member').get(m.id)!.weight, 42);
    const s = await reconcile();
    assert.equal(s.ready, true, s.message);
    assert.deepEqual(s.drift, ['member 127.0.0.10:8081']);
    assert.equal(rowsOf<MemberRow>(d.core.holder.current, 'member').get(m.id)!.weight, 3);
    assert.ok(d.logs.lines.some((l) => l.msg === 'drift detected on git-owned resources; corrected'));
  });

  it('gslbctl diff against the daemon: exit 0 without changes, 1 with, 2 for invalid manifests', async () => {
    const dir = fx.repo.dir;
    const same = await gslbctl(['diff', dir, '--server', d.url]);
    assert.equal(same.code, 0, same.stderr + same.stdout);
    assert.match(same.stdout, /No changes\./);
    fx.repo.write('pools/extra.yaml', 'apiVersion: gslb/v1\nkind: Pool\nmetadata: {name: extra}\nspec:\n  members:\n    - {ipAddress: 10.9.0.1, port: 80}\n');
    const changed = await gslbctl(['diff', dir, '--server', d.url]);
    assert.equal(changed.code, 1, changed.stderr);
    assert.match(changed.stdout, /\+ipAddress: 10\.9\.0\.1/);
    const json = await gslbctl(['diff', dir, '--server', d.url, '-o', 'json']);
    assert.deepEqual(JSON.parse(json.stdout).counts, { create: 1, update: 0, delete: 0 });
    fx.repo.write('pools/extra.yaml', 'kind: [\n');
    const invalid = await gslbctl(['diff', dir, '--server', d.url]);
    assert.equal(invalid.code, 2);
    assert.match(invalid.stdout, /pools\/extra\.yaml:\d+:/);
    fx.repo.git(['checkout', '--', '.']);
    const hist = await gslbctl(['history', '--server', d.url]);
    assert.equal(hist.code, 0);
    assert.match(hist.stdout, /drain 127\.0\.0\.11/);
  });
});
