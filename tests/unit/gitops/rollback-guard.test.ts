import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { RollbackGuard } from '../../../gitops/rollback/guard.js';
import { initialRollbackStatus, type RollbackRecord, type RollbackStatus } from '../../../gitops/rollback/state.js';
import type { Signals } from '../../../gitops/watch/signals.js';

const reading = (t: number, over: Partial<Signals> = {}): Signals => ({ at: t, queries: 0, servfail: 0, enabled: 2, healthy: 2, ...over });

/** A guard with injected readings, clock and controller: what it asked for is recorded. */
function makeGuard(o: { enabled?: boolean; lastApplied?: string; state?: RollbackStatus } = {}) {
  let now = reading(0);
  let applied = o.lastApplied;
  const calls = { saves: 0, rollbacks: 0, reports: [] as RollbackRecord[] };
  const enabled = o.enabled ?? true;
  const state = o.state ?? initialRollbackStatus(enabled, undefined, applied);
  const guard = new RollbackGuard({
    options: { enabled, windowMs: 10_000, checkIntervalMs: 1000, thresholds: { minHealthyShare: 0.5, maxServfailRate: 0.05, minQueries: 100 } },
    read: () => now, log: pino({ level: 'silent' }), lastApplied: () => applied,
    save: () => { calls.saves++; }, requestRollback: () => { calls.rollbacks++; }, report: (r) => { calls.reports.push(r); },
  }, state);
  /** an apply of `sha` at time `t` with changes, as the reconcile reports it */
  const apply = (sha: string, t: number, over: { healthy?: number; result?: 'applied' | 'noop'; forced?: boolean; drift?: boolean } = {}) => {
    now = reading(t, over.healthy === undefined ? {} : { healthy: over.healthy });
    const baseline = guard.baseline();
    applied = sha;
    guard.afterApply({ sha, result: over.result ?? 'applied', drift: over.drift ?? false, forced: over.forced ?? false, baseline });
  };
  const tick = (t: number, over: Partial<Signals> = {}) => { now = reading(t, over); guard.tick(now); };
  // `watch()` is a call, so an assertion on one read does not narrow the next
  return { guard, state: guard.state, watch: () => guard.state.watch, calls, apply, tick, setApplied: (s: string) => { applied = s; } };
}

test('first apply ever: a breach has nothing to roll back to; reported, not requested', () => {
  const g = makeGuard();
  g.apply('r1', 0);
  assert.equal(g.watch()?.rollbackTo, null);
  g.tick(1000, { healthy: 0 });
  assert.equal(g.calls.rollbacks, 0);
  assert.equal(g.watch(), null);
  assert.equal(g.state.lastGoodRevision, null, 'a breached revision is not good');
  assert.deepEqual(g.calls.reports.map((r) => [r.from, r.to, r.result]), [['r1', null, 'NoGoodRevision']]);
  assert.equal(g.state.lastRollback?.result, 'NoGoodRevision');
});

test('a window that passes makes the revision good; a breach of the next one asks for a rollback to it; the rollback pins it out', () => {
  const g = makeGuard();
  g.apply('r1', 0);
  for (let t = 1000; t <= 10_000; t += 1000) g.tick(t);
  assert.equal(g.watch(), null);
  assert.equal(g.state.lastGoodRevision, 'r1');
  g.apply('r2', 20_000);
  assert.equal(g.watch()?.rollbackTo, 'r1');
  g.tick(21_000);
  assert.equal(g.calls.rollbacks, 0);
  g.tick(22_000, { healthy: 0 });
  assert.equal(g.calls.rollbacks, 1);
  assert.deepEqual(g.state.pending, { from: 'r2', to: 'r1', reason: 'healthy members 0/2 (0%) below minHealthyShare 50%', at: 22_000 });
  assert.ok(g.calls.saves >= 2, 'the pending rollback is persisted');
  const rec = g.guard.rolledBack(g.state.pending!, 'rolled back', 22_100);
  assert.equal(rec.result, 'RolledBack');
  assert.equal(g.state.pending, null);
  assert.deepEqual(g.state.pinnedOut.map((p) => [p.revision, p.rolledBackTo]), [['r2', 'r1']]);
  assert.ok(g.guard.pinned('r2'));
  assert.equal(g.state.lastGoodRevision, 'r1');
  // a newer revision applied: pin-outs cleared, watched with r1 to go back to
  g.apply('r3', 30_000);
  assert.deepEqual(g.state.pinnedOut, []);
  assert.equal(g.watch()?.revision, 'r3');
  assert.equal(g.watch()?.rollbackTo, 'r1');
});

test('members already down before the apply: no rollback, the state says why, the window passes', () => {
  const g = makeGuard({ lastApplied: 'r0' });
  g.apply('r1', 0, { healthy: 0 });
  assert.match(g.watch()!.baselineBreach!, /healthy members 0\/2/);
  g.tick(5000, { healthy: 0 });
  g.tick(10_000, { healthy: 0 });
  assert.equal(g.calls.rollbacks, 0);
  assert.equal(g.state.lastGoodRevision, 'r1');
});

test('a revision superseded inside its window does not become good; the next breach goes back to the last good one', () => {
  const g = makeGuard({ lastApplied: 'r0' });
  assert.equal(g.state.lastGoodRevision, 'r0', 'what serves when the guard first starts counts as good');
  g.apply('r1', 0);
  g.tick(1000);
  g.apply('r2', 2000);
  assert.equal(g.watch()?.revision, 'r2');
  assert.equal(g.watch()?.rollbackTo, 'r0');
  g.tick(3000, { healthy: 0 });
  assert.equal(g.state.pending?.to, 'r0');
});

test('an empty commit during the watch carries the watch over; a drift correction changes nothing', () => {
  const g = makeGuard({ lastApplied: 'r0' });
  g.apply('r1', 0);
  g.apply('r1', 500, { drift: true });
  assert.equal(g.watch()?.startedAt, 0);
  g.apply('r1b', 1000, { result: 'noop' });
  assert.equal(g.watch()?.revision, 'r1b');
  assert.equal(g.watch()?.startedAt, 0, 'same window');
  g.tick(2000, { healthy: 0 });
  assert.deepEqual([g.state.pending?.from, g.state.pending?.to], ['r1b', 'r0'], 'the head is what gets pinned');
});

test('forcing a pinned-out revision back is an override: not watched, good at once', () => {
  const g = makeGuard({ lastApplied: 'r0' });
  g.apply('r1', 0);
  g.tick(1000, { healthy: 0 });
  g.guard.rolledBack(g.state.pending!, 'rolled back', 1100);
  g.setApplied('r0');
  g.apply('r1', 5000, { forced: true });
  assert.equal(g.watch(), null);
  assert.deepEqual(g.state.pinnedOut, []);
  assert.equal(g.state.lastGoodRevision, 'r1');
  // forcing a revision that is not pinned out is watched as usual
  g.apply('r2', 6000, { forced: true });
  assert.equal(g.watch()?.revision, 'r2');
});

test('rollback off: every applied revision is good at once, nothing is watched', () => {
  const g = makeGuard({ enabled: false, lastApplied: 'r0' });
  g.apply('r1', 0);
  assert.equal(g.watch(), null);
  assert.equal(g.state.lastGoodRevision, 'r1');
  g.tick(1000, { healthy: 0 });
  assert.equal(g.calls.rollbacks + g.calls.reports.length, 0);
});

test('after a restart a watch resumes until its end with a fresh baseline; one whose end passed is good', () => {
  const first = makeGuard({ lastApplied: 'r0' });
  first.apply('r1', 0);
  const persisted = structuredClone(first.state);
  const resumed = makeGuard({ lastApplied: 'r1', state: structuredClone(persisted) });
  resumed.tick(4000); // what the process reads at start (its DNS counters restarted)
  resumed.guard.start();
  resumed.guard.stop();
  assert.equal(resumed.guard.state.watch?.until, 10_000);
  assert.equal(resumed.guard.state.watch?.startedAt, 0);
  assert.equal(resumed.guard.state.watch?.baseline.at, 4000);
  resumed.tick(5000, { healthy: 0 });
  assert.equal(resumed.calls.rollbacks, 1);
  const late = makeGuard({ lastApplied: 'r1', state: structuredClone(persisted) });
  late.tick(60_000);
  late.guard.start();
  late.guard.stop();
  assert.equal(late.guard.state.watch, null);
  assert.equal(late.state.lastGoodRevision, 'r1');
});

test('a follower (no git lease) watches nothing and takes what it serves as good', () => {
  const g = makeGuard({ lastApplied: 'r0' });
  g.apply('r1', 0);
  g.tick(1000, { healthy: 0 });
  assert.ok(g.state.pending);
  g.setApplied('r5');
  g.guard.follow();
  assert.equal(g.watch(), null);
  assert.equal(g.state.pending, null);
  assert.equal(g.state.lastGoodRevision, 'r5');
});
