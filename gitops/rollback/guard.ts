import type { Logger } from '../../runtime/log/logger.js';
import type { Signals } from '../watch/signals.js';
import { ReadingHistory, observe, openWatch } from './window.js';
import type { PendingRollback, RollbackOptions, RollbackRecord, RollbackStatus } from './state.js';

/** What the guard needs from the controller; injected, so tests drive it with readings and a clock. */
export interface GuardDeps {
  options: RollbackOptions;
  /** reads this node's signals now (gitops/watch/signals.ts) */
  read: () => Signals;
  log: Logger;
  /** the last applied git revision (the revisions table) */
  lastApplied: () => string | undefined;
  /** persists the status; called after a change a restart must not lose */
  save: () => void;
  /** a breach with a good revision to go back to: run the rollback (through the reconcile loop) */
  requestRollback: () => void;
  /** a breach that rolled nothing back (NoGoodRevision): count it, alert */
  report: (rec: RollbackRecord) => void;
}

/** What an apply looked like, for the guard. */
export interface AppliedRevision {
  sha: string;
  /** `noop`: a commit that changed no row was recorded */
  result: 'applied' | 'noop';
  /** a drift correction of the revision already applied: not a new revision */
  drift: boolean;
  /** the request was forced (`gslbctl reconcile --force`) */
  forced: boolean;
  /** the reading right before the apply; undefined while rollback is off */
  baseline: Signals | undefined;
}

/**
 * Health-gated rollback (docs/gitops.md "Automatic rollback"): watches each applied revision for
 * `window`, reading the signals every `checkInterval`; a breach the apply caused asks the loop to
 * re-apply the last good revision (`pending`), and the bad one is then pinned out. A revision whose
 * window passes becomes the last good one. The state is `state` (the `rollback` of the controller
 * status, persisted with it). Ticks are synchronous and never overlap a reconcile's own bookkeeping.
 */
export class RollbackGuard {
  private readonly history: ReadingHistory;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly d: GuardDeps, readonly state: RollbackStatus) {
    this.history = new ReadingHistory(d.options.windowMs);
    if (!d.options.enabled) {
      // switched off: nothing is watched, and what is applied counts as good
      state.watch = null;
      state.pending = null;
      state.lastGoodRevision = d.lastApplied() ?? state.lastGoodRevision;
    }
  }

  /**
   * Starts reading the signals every checkInterval (when enabled). A watch persisted by a previous
   * run resumes for what is left of its window with a fresh baseline (the DNS counters restarted
   * with the process); a window that ended while the daemon was down passes.
   */
  start(): void {
    if (!this.d.options.enabled || this.timer) return;
    const w = this.state.watch;
    if (w && this.d.lastApplied() !== w.revision) this.state.watch = null;
    else if (w) {
      const now = this.d.read();
      if (now.at >= w.until) this.pass(w.revision, 'its window ended while the daemon was stopped');
      else this.state.watch = { ...openWatch({ revision: w.revision, rollbackTo: w.rollbackTo, baseline: now, before: undefined, windowMs: w.until - now.at, thresholds: this.d.options.thresholds }), startedAt: w.startedAt };
    }
    this.timer = setInterval(() => this.tick(this.d.read()), this.d.options.checkIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** A reading right before an apply (undefined while rollback is off). */
  baseline(): Signals | undefined {
    return this.d.options.enabled ? this.d.read() : undefined;
  }

  /** The pin-out of `sha`, if it was rolled back. */
  pinned(sha: string): RollbackStatus['pinnedOut'][number] | undefined {
    return this.state.pinnedOut.find((p) => p.revision === sha);
  }

  /**
   * Judges one reading: keeps it in the history, and moves the watch on (passed: the revision is
   * good; breach: roll back, or report that there is nothing to roll back to).
   */
  tick(reading: Signals): void {
    this.history.add(reading);
    const w = this.state.watch;
    if (!w) return;
    const step = observe(w, reading);
    if (step.kind === 'watching') {
      this.state.watch = step.watch;
      return;
    }
    this.state.watch = null;
    if (step.kind === 'passed') this.pass(w.revision, 'its window passed without a breach');
    else this.breach(step.watch, step.breach, reading.at);
  }

  private pass(revision: string, why: string): void {
    this.state.watch = null;
    this.state.lastGoodRevision = revision;
    this.d.log.info({ revision, why }, 'rollback watch passed: revision is good');
    this.d.save();
  }

  private breach(w: NonNullable<RollbackStatus['watch']>, reason: string, at: number): void {
    const fields = { revision: w.revision, rollbackTo: w.rollbackTo, breach: reason, verdict: w.last, baseline: w.baseline };
    if (!w.rollbackTo) {
      this.d.log.warn(fields, 'health breach after apply; no earlier good revision to roll back to');
      const rec: RollbackRecord = {
        from: w.revision, to: null, reason, at, result: 'NoGoodRevision',
        message: `revision ${w.revision.slice(0, 12)} breached (${reason}) but no earlier revision passed its window; it stays applied`,
      };
      this.state.lastRollback = rec;
      this.d.save();
      this.d.report(rec);
      return;
    }
    this.d.log.warn(fields, 'health breach after apply; rolling back');
    this.state.pending = { from: w.revision, to: w.rollbackTo, reason, at };
    this.d.save();
    this.d.requestRollback();
  }

  /**
   * Called by the reconcile after its apply step. A drift correction changes nothing here. A
   * recorded empty commit carries the watch (and a pending rollback) over to itself: it serves the
   * same rows, so it is what a breach pins out. A revision with changes clears the pin-outs and any
   * pending rollback, ends the watch of an earlier revision without a verdict (that one does not
   * become good), and opens its own watch with the last good revision to go back to. It becomes
   * good at once when rollback is off, when it is the last good revision already, or when it is a
   * pinned-out revision forced back by an operator (an override is not judged again).
   */
  afterApply(a: AppliedRevision): void {
    if (a.drift) return;
    const s = this.state;
    if (a.result === 'noop') {
      if (s.watch) s.watch = { ...s.watch, revision: a.sha };
      if (s.pending) s.pending = { ...s.pending, from: a.sha };
      return;
    }
    const override = a.forced && this.pinned(a.sha) !== undefined;
    s.pinnedOut = [];
    s.pending = null;
    if (s.watch) this.d.log.info({ revision: s.watch.revision, supersededBy: a.sha }, 'rollback watch ended without a verdict: a newer revision was applied');
    s.watch = null;
    if (!a.baseline || override) {
      s.lastGoodRevision = a.sha;
      if (override) this.d.log.info({ revision: a.sha }, 'pinned-out revision applied by force; not watched');
      return;
    }
    if (s.lastGoodRevision === a.sha) return;
    s.watch = openWatch({
      revision: a.sha, rollbackTo: s.lastGoodRevision, baseline: a.baseline, before: this.history.oldestSince(a.baseline.at),
      windowMs: this.d.options.windowMs, thresholds: this.d.options.thresholds,
    });
    if (s.watch.baselineBreach) {
      this.d.log.info({ revision: a.sha, baselineBreach: s.watch.baselineBreach }, 'rollback watch: already in breach before the apply; those checks are off for this window');
    }
  }

  /** The rollback of `p` was applied: `p.from` is pinned out until a newer revision is applied. */
  rolledBack(p: PendingRollback, message: string, at: number): RollbackRecord {
    const s = this.state;
    s.pending = null;
    s.watch = null;
    s.pinnedOut = [...s.pinnedOut.filter((x) => x.revision !== p.from), { revision: p.from, rolledBackTo: p.to, reason: p.reason, at }];
    s.lastRollback = { from: p.from, to: p.to, reason: p.reason, at, result: 'RolledBack', message };
    return s.lastRollback;
  }

  /** The rollback of `p` could not be applied: the bad revision stays applied and is not pinned. */
  failed(p: PendingRollback, message: string, at: number): RollbackRecord {
    this.state.pending = null;
    this.state.lastRollback = { from: p.from, to: null, reason: p.reason, at, result: 'RollbackFailed', message };
    return this.state.lastRollback;
  }

  /**
   * This node does not hold the git lease: the leader applies and judges, and what arrives here
   * through the config stream is taken as good, so that a node that becomes leader later has a
   * recent revision to go back to. A watch or a pending rollback of its own no longer applies.
   */
  follow(): void {
    const s = this.state;
    s.watch = null;
    s.pending = null;
    s.lastGoodRevision = this.d.lastApplied() ?? s.lastGoodRevision;
  }

  /** Drops a pending rollback that no longer applies (the revision it judged is no longer applied). */
  drop(p: PendingRollback, why: string): void {
    this.state.pending = null;
    this.d.log.info({ revision: p.from, rollbackTo: p.to }, `rollback dropped: ${why}`);
  }
}
