import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startGitFixture, type GitFixture } from '../helpers/git-fixture.js';
import { dig, udpExchange } from '../helpers/dns-tools.js';
import { startHttpMember, stopHttpMember } from '../helpers/http-member.js';
import { Recorder } from '../helpers/recorder.js';
import { gslbctl } from '../helpers/gslbctl.js';
import { waitFor } from '../helpers/proc.js';
import { WAIT_CEILING_MS } from '../helpers/wait.js';
import { buildQueryPacket } from '../../runtime/dns/query-packet.js';

// The watch after an apply: long enough that a loaded machine's health checks still see the
// breach inside it (the first test waits it out once).
const WINDOW_MS = 10_000;

/** A pool of two members on `port` (TCP check every 200 ms, one failure takes a member out) and a service. */
function manifests(ips: [string, string], port: number, opts: { ttl?: number; whenAllUnhealthy?: string } = {}): string {
  return `apiVersion: gslb/v1
kind: Pool
metadata: {name: web}
spec:
  members:
    - {ipAddress: ${ips[0]}, port: ${port}}
    - {ipAddress: ${ips[1]}, port: ${port}}
  healthCheck: {type: tcp, port: ${port}, intervalMs: 200, timeoutMs: 150, fall: 1, rise: 1}
---
apiVersion: gslb/v1
kind: Service
metadata: {name: www}
spec: {domain: www.rollback.test., pool: web, ttl: ${opts.ttl ?? 5}${opts.whenAllUnhealthy ? `, whenAllUnhealthy: ${opts.whenAllUnhealthy}` : ''}}
`;
}

const status = async (d: TestDaemon) => (await api(d.url, 'GET', '/api/v1/gitops/status')).body;
const answers = async (port: number) => (await dig(port, ['www.rollback.test.', 'A'])).answers.sort();
const versionTxt = async (port: number) => (await dig(port, ['version.gslb.', 'TXT', 'CH'])).answers[0]?.replace(/^"|"$/g, '') ?? '';

/**
 * Health-gated rollback end to end (docs/gitops.md "Automatic rollback"): signed commits served by
 * git http-backend, the real daemon, real TCP health checks against listeners on loopback, DNS
 * asked with dig, alerts to a recording webhook (a server-wide `alerts.webhooks` target).
 */
describe('gitops rollback: a revision whose members go down is rolled back and pinned out', () => {
  let fx: GitFixture;
  let d: TestDaemon;
  let dnsPort: number;
  let port: number;
  const members: Server[] = [];
  const hook = new Recorder();
  let rev1 = '';

  before(async () => {
    members.push(await startHttpMember('127.0.0.51'));
    port = (members[0]!.address() as AddressInfo).port;
    members.push(await startHttpMember('127.0.0.52', port));
    fx = await startGitFixture();
    fx.repo.write('web.yaml', manifests(['127.0.0.51', '127.0.0.52'], port));
    rev1 = fx.repo.commit('web on .51 and .52', fx.ops);
    const url = await hook.start();
    d = await startTestDaemon({
      gitops: { ...fx.gitops, pollInterval: '500ms', rollback: { enabled: true, window: `${WINDOW_MS}ms`, checkInterval: '200ms' } },
      alerts: { webhooks: [{ url: `${url}/hook` }] },
    }, { GITOPS_WEBHOOK_SECRET: fx.webhookSecret });
    dnsPort = d.ports.dnsPort as number;
    // an operator's subscription (an alert-target row) to applied revisions and rollbacks
    const row = await api(d.url, 'POST', '/api/v1/alert-targets', { name: 'deploys', type: 'webhook', webhook: { url: `${url}/row` }, events: ['apply', 'rollback'] });
    assert.equal(row.status, 201, JSON.stringify(row.body));
  });
  after(async () => {
    await d?.stop();
    await hook.stop();
    await fx?.close();
    for (const m of members) await stopHttpMember(m);
  });

  it('watches the first revision for its window and then calls it good', async () => {
    const first = await waitFor(async () => { const s = await status(d); return s.lastAppliedRevision === rev1 && s; }, 10_000, 100);
    assert.equal(first.rollback.enabled, true);
    assert.equal(first.rollback.lastGoodRevision, null, 'not good before its window passed');
    assert.equal(first.rollback.watch?.revision, rev1);
    assert.equal(first.rollback.watch?.rollbackTo, null);
    const good = await waitFor(async () => { const s = await status(d); return s.rollback.lastGoodRevision === rev1 && s; }, WINDOW_MS + 5000, 100);
    assert.equal(good.rollback.watch, null);
    assert.deepEqual(await answers(dnsPort), ['127.0.0.51', '127.0.0.52']);
  });

  it('rolls a breaching revision back within the window: DNS, provenance, status, history, alert, metric, logs', async () => {
    fx.repo.write('web.yaml', manifests(['127.0.0.61', '127.0.0.62'], port));
    const rev2 = fx.repo.commit('web moves to .61 and .62, where nothing listens', fx.ops);
    const applied = (await api(d.url, 'POST', '/api/v1/gitops/reconcile', {})).body;
    assert.equal(applied.lastAppliedRevision, rev2, applied.message);
    assert.equal(applied.rollback.watch?.revision, rev2);
    assert.equal(applied.rollback.watch?.rollbackTo, rev1);
    assert.equal(applied.rollback.watch?.baselineBreach, null, 'every member was healthy before the apply');

    const s = await waitFor(async () => { const x = await status(d); return x.rollback.lastRollback?.result === 'RolledBack' && x; }, WINDOW_MS + WAIT_CEILING_MS, 50, 'the rollback', () => d.logs.lines.slice(-5));
    const watch = applied.rollback.watch as { startedAt: number; until: number };
    assert.ok(s.rollback.lastRollback.at >= watch.startedAt && s.rollback.lastRollback.at <= watch.until, `rolled back at ${s.rollback.lastRollback.at}, inside the watch ${watch.startedAt}..${watch.until}`);
    assert.deepEqual({ ...s.rollback.lastRollback, at: 0, message: '' }, { from: rev2, to: rev1, reason: 'healthy members 0/2 (0%) below minHealthyShare 50%', at: 0, result: 'RolledBack', message: '' });
    assert.equal(s.ready, false);
    assert.equal(s.reason, 'RolledBack');
    assert.equal(s.errorClass, 'stalled');
    assert.match(s.message, new RegExp(`revision ${rev2.slice(0, 12)} was rolled back to ${rev1.slice(0, 12)}: healthy members 0/2`));
    assert.equal(s.lastAppliedRevision, rev1);
    assert.deepEqual(s.rollback.pinnedOut.map((p: { revision: string; rolledBackTo: string }) => [p.revision, p.rolledBackTo]), [[rev2, rev1]]);
    assert.equal(s.rollback.lastGoodRevision, rev1);
    assert.equal(s.rollback.pending, null);
    assert.equal(s.recentRejections[0].sha, rev2);
    assert.equal(s.recentRejections[0].reason, 'RolledBack');

    // DNS answers revision 1's members again, and every node says it serves revision 1
    assert.deepEqual(await waitFor(async () => { const a = await answers(dnsPort); return a[0] === '127.0.0.51' && a; }, 3000, 50), ['127.0.0.51', '127.0.0.52']);
    assert.match(await versionTxt(dnsPort), new RegExp(`^commit=${rev1} signer=${fx.ops.fingerprint} `));
    assert.equal(s.provenance.commit, rev1);
    const history = (await api(d.url, 'GET', '/api/v1/gitops/history')).body;
    // revision 2 arrives by the manual reconcile or by a poll that got there first
    assert.deepEqual(history.map((h: { sha: string; trigger: string }) => [h.sha, h.trigger === 'poll' ? 'manual' : h.trigger]), [[rev1, 'rollback'], [rev2, 'manual'], [rev1, 'start']]);
    assert.equal(history[0].signer, fx.ops.fingerprint, 'the rollback records the good commit with its signer');

    // one warn line at the breach, one info line for the applied rollback
    const breach = d.logs.lines.filter((l) => String(l.msg).startsWith('health breach after apply'));
    assert.equal(breach.length, 1);
    assert.equal(breach[0]!.level, 40);
    assert.equal(breach[0]!.revision, rev2);
    assert.equal(breach[0]!.rollbackTo, rev1);
    const done = d.logs.lines.filter((l) => l.msg === 'rollback applied');
    assert.equal(done.length, 1);
    assert.equal(done[0]!.level, 30);
    assert.deepEqual([done[0]!.from, done[0]!.to, done[0]!.breach], [rev2, rev1, 'healthy members 0/2 (0%) below minHealthyShare 50%']);
    assert.match(await d.core.metrics.metrics(), /gslbd_gitops_rollbacks_total\{result="success"[^}]*\} 1/);

    // the server-wide webhook gets the rollback with both revisions and the breach, not the applies
    const alert = await waitFor(() => hook.requests.find((r) => r.url === '/hook' && r.json?.type === 'gitops_rollback'), 10_000, 50);
    assert.deepEqual({ ...alert.json, timestamp: 0, secondsSinceApply: 0, message: '' }, {
      type: 'gitops_rollback', revision: rev2, rolledBackTo: rev1, reason: 'healthy members 0/2 (0%) below minHealthyShare 50%', result: 'RolledBack',
      message: '', creates: 2, updates: 0, deletes: 2, timestamp: 0, appliedCommit: rev1, secondsSinceApply: 0,
    });
    const fileHook = hook.requests.filter((r) => r.url === '/hook');
    assert.equal(fileHook.filter((r) => r.json?.type === 'gitops_applied').length, 0, 'applied revisions are not for the file targets');
    // the subscribed row gets revision 2's apply and the rollback; the rollback's own apply is not announced as an apply
    // (revision 1's first apply may reach it too: the row was created as the daemon started)
    const row = await waitFor(() => { const got = hook.requests.filter((r) => r.url === '/row'); return got.some((r) => r.json?.type === 'gitops_rollback') && got; }, 10_000, 50);
    const since = row.slice(row.findIndex((r) => r.json.revision === rev2));
    assert.deepEqual(since.map((r) => [r.json.type, r.json.revision]), [['gitops_applied', rev2], ['gitops_rollback', rev2]]);
    assert.equal(since[1]!.json.rolledBackTo, rev1);
  });

  it('does not apply the pinned-out head again: polls, a manual reconcile, a push webhook', async () => {
    const rev2 = fx.repo.head();
    const before = (await status(d)).lastAttemptAt;
    await waitFor(async () => (await status(d)).lastAttemptAt > before + 600, WAIT_CEILING_MS, 100, 'two polls at least');
    const manual = (await api(d.url, 'POST', '/api/v1/gitops/reconcile', {})).body;
    assert.equal(manual.reason, 'RolledBack');
    assert.equal(manual.provenance.commit, rev1);
    const { body, headers } = fx.webhook();
    const attempted = (await status(d)).lastAttemptAt;
    assert.equal((await api(d.url, 'POST', '/api/v1/gitops/webhook', body, headers)).status, 202);
    // a reconcile after the push (the webhook's, or a poll's) has run: it too left the pinned-out head alone
    const s = await waitFor(async () => { const x = await status(d); return x.lastAttemptAt > attempted && x; }, WAIT_CEILING_MS, 50, 'a reconcile after the push');
    assert.equal(s.reason, 'RolledBack');
    assert.equal(s.observedRevision, rev2);
    assert.equal(s.lastAppliedRevision, rev1);
    assert.equal((await api(d.url, 'GET', '/api/v1/gitops/history')).body.length, 3, 'nothing applied since the rollback');
    assert.match(await versionTxt(dnsPort), new RegExp(`^commit=${rev1} `));
    const ctl = await gslbctl(['status', '--server', d.url]);
    assert.equal(ctl.code, 1, ctl.stderr);
    assert.match(ctl.stdout, /^Ready: {10}False \(RolledBack, stalled\)$/m);
    assert.match(ctl.stdout, new RegExp(`^Rollback: {7}on, last good revision ${rev1.slice(0, 12)}$`, 'm'));
    assert.match(ctl.stdout, new RegExp(`^ {2}Last rollback: .* ${rev2.slice(0, 12)} -> ${rev1.slice(0, 12)} \\(RolledBack\\): healthy members 0/2`, 'm'));
    assert.match(ctl.stdout, new RegExp(`^ {2}Pinned out: {3}${rev2.slice(0, 12)} \\(rolled back to ${rev1.slice(0, 12)} `, 'm'));
  });

  it('applies the pinned-out head when forced: an operator override, not watched', async () => {
    const rev2 = fx.repo.head();
    const forced = (await gslbctl(['reconcile', '--force', '--server', d.url, '-o', 'json']));
    assert.equal(forced.code, 0, forced.stderr);
    const s = JSON.parse(forced.stdout);
    assert.equal(s.reason, 'Succeeded');
    assert.equal(s.lastAppliedRevision, rev2);
    assert.deepEqual(s.rollback.pinnedOut, []);
    assert.equal(s.rollback.watch, null);
    assert.equal(s.rollback.lastGoodRevision, rev2);
    // its members go down, and nothing rolls it back
    await waitFor(async () => (await answers(dnsPort))[0] === '127.0.0.61', 3000, 50);
    await new Promise((r) => setTimeout(r, 1000));
    const later = await status(d);
    assert.equal(later.lastAppliedRevision, rev2);
    assert.equal(later.rollback.lastRollback.from, rev2, 'no new rollback');
    assert.equal(later.rollback.lastRollback.to, rev1);
  });

  it('applies a newer commit normally and watches it', async () => {
    const rev2 = fx.repo.head();
    fx.repo.write('web.yaml', manifests(['127.0.0.51', '127.0.0.52'], port, { ttl: 7 }));
    const rev3 = fx.repo.commit('web back on .51 and .52, ttl 7', fx.ops);
    const s = (await api(d.url, 'POST', '/api/v1/gitops/reconcile', {})).body;
    assert.equal(s.ready, true, s.message);
    assert.equal(s.lastAppliedRevision, rev3);
    assert.equal(s.provenance.commit, rev3);
    assert.equal(s.rollback.watch?.revision, rev3);
    assert.equal(s.rollback.watch?.rollbackTo, rev2, 'the forced revision became the last good one');
    const r = await waitFor(async () => { const x = await dig(dnsPort, ['www.rollback.test.', 'A']); return x.answers.length === 2 && x; }, 3000, 50);
    assert.match(r.text, /www\.rollback\.test\.\s+7\s+IN\s+A\s+127\.0\.0\.5[12]/);
    const good = await waitFor(async () => { const x = await status(d); return x.rollback.lastGoodRevision === rev3 && x; }, WINDOW_MS + 3000, 100);
    assert.equal(good.rollback.lastRollback.from, rev2, 'no rollback of the healthy revision');
  });
});

/**
 * The SERVFAIL-rate check end to end: a service that answers SERVFAIL when its pool has no healthy
 * member, a revision that moves the pool's only member to an address where nothing listens, and a
 * bounded number of UDP queries. The healthy-share check is off, so only the rate can breach.
 */
describe('gitops rollback: a SERVFAIL rate over the limit rolls back', () => {
  let fx: GitFixture;
  let d: TestDaemon;
  let member: Server;

  before(async () => {
    member = await startHttpMember('127.0.0.53');
    fx = await startGitFixture();
  });
  after(async () => {
    await d?.stop();
    await fx?.close();
    await stopHttpMember(member);
  });

  it('counts SERVFAIL answers since the apply and rolls back once minQueries are answered', async () => {
    const port = (member.address() as AddressInfo).port;
    fx.repo.write('web.yaml', manifests(['127.0.0.53', '127.0.0.54'], port, { whenAllUnhealthy: 'servfail' }).replace(/ {4}- \{ipAddress: 127\.0\.0\.54.*\n/, ''));
    const rev1 = fx.repo.commit('one member on .53', fx.ops);
    d = await startTestDaemon({
      gitops: { ...fx.gitops, rollback: { enabled: true, window: '2500ms', checkInterval: '200ms', minHealthyShare: 0, maxServfailRate: 0.2, minQueries: 50 } },
    });
    const dnsPort = d.ports.dnsPort as number;
    await waitFor(async () => (await status(d)).rollback.lastGoodRevision === rev1, 8000, 100);
    const query = buildQueryPacket('www.rollback.test.', 1);
    const rcode = async () => (await udpExchange(dnsPort, query)).readUInt8(3) & 0x0f;
    assert.equal(await rcode(), 0);

    fx.repo.write('web.yaml', manifests(['127.0.0.63', '127.0.0.64'], port, { whenAllUnhealthy: 'servfail' }).replace(/ {4}- \{ipAddress: 127\.0\.0\.64.*\n/, ''));
    const rev2 = fx.repo.commit('the member moves to .63, where nothing listens', fx.ops);
    assert.equal((await api(d.url, 'POST', '/api/v1/gitops/reconcile', {})).body.lastAppliedRevision, rev2);
    await waitFor(async () => (await rcode()) === 2, 3000, 20);
    // a bounded burst: 60 queries, SERVFAIL until the rollback lands
    for (let i = 0; i < 60; i++) await rcode();
    const s = await waitFor(async () => { const x = await status(d); return x.rollback.lastRollback && x; }, 2000, 50);
    assert.equal(s.rollback.lastRollback.result, 'RolledBack');
    assert.equal(s.rollback.lastRollback.to, rev1);
    assert.match(s.rollback.lastRollback.reason, /^SERVFAIL rate \d+(\.\d)?% of \d+ answers above maxServfailRate 20%$/);
    assert.deepEqual(s.rollback.pinnedOut.map((p: { revision: string }) => p.revision), [rev2]);
    assert.equal(await waitFor(async () => (await rcode()) === 0 || undefined, 3000, 50), true);
    assert.deepEqual((await dig(dnsPort, ['www.rollback.test.', 'A'])).answers, ['127.0.0.53']);
  });
});
