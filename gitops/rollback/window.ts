import { judge, type Signals, type Thresholds, type Verdict } from '../watch/signals.js';

/** A verdict and when its reading was taken. */
export interface VerdictAt extends Verdict { at: number }

/**
 * The watch over one applied revision (docs/gitops.md "Automatic rollback"): the baseline read right
 * before the apply, the end of the window, the thresholds in force for this window and the latest
 * verdict. Plain data: it is persisted with the controller status.
 */
export interface Watch {
  /** the revision under watch (the branch head that was applied) */
  revision: string;
  /** the last good revision, re-applied on a breach; null when there is none (first apply) */
  rollbackTo: string | null;
  startedAt: number;
  /** Unix ms; a revision that reaches it without a breach becomes the last good revision */
  until: number;
  baseline: Signals;
  /**
   * what was already in breach at the apply (a sentence), or null: those checks are off for this
   * window, since the apply did not cause them
   */
  baselineBreach: string | null;
  /** the thresholds judged in this window (a check in breach at the baseline is switched off) */
  thresholds: Thresholds;
  last: VerdictAt | null;
}

/** What one reading means for a watch. */
export type WatchStep =
  | { kind: 'watching'; watch: Watch }
  | { kind: 'breach'; watch: Watch; breach: string }
  | { kind: 'passed'; watch: Watch };

/** Thresholds that switch a check off (see Thresholds in gitops/watch/signals.ts). */
const HEALTH_OFF = 0;
const SERVFAIL_OFF = 1;

/**
 * Opens the watch of `revision` applied at `baseline.at`. `before` is a reading from up to one
 * window before the apply (undefined at start): the SERVFAIL rate between it and the baseline says
 * whether the rate was already over the limit. A check already in breach at the baseline is switched
 * off for this window and named in `baselineBreach`: a breach counts only when the apply crossed the
 * threshold. Pure.
 */
export function openWatch(o: { revision: string; rollbackTo: string | null; baseline: Signals; before: Signals | undefined; windowMs: number; thresholds: Thresholds }): Watch {
  const t = o.thresholds;
  const healthAtApply = judge(o.baseline, o.baseline, { ...t, maxServfailRate: SERVFAIL_OFF }).breach;
  const servfailBefore = judge(o.before ?? o.baseline, o.baseline, { ...t, minHealthyShare: HEALTH_OFF }).breach;
  const already = [healthAtApply, servfailBefore].filter((b): b is string => b !== null);
  return {
    revision: o.revision, rollbackTo: o.rollbackTo, startedAt: o.baseline.at, until: o.baseline.at + o.windowMs, baseline: o.baseline,
    baselineBreach: already.length ? already.join('; ') : null,
    thresholds: {
      minHealthyShare: healthAtApply ? HEALTH_OFF : t.minHealthyShare,
      maxServfailRate: servfailBefore ? SERVFAIL_OFF : t.maxServfailRate,
      minQueries: t.minQueries,
    },
    last: null,
  };
}

/**
 * Judges one reading `now` against the watch: a breach (the first crossed threshold, as `judge`
 * names it) ends the watch as `breach`; otherwise a reading at or after `until` ends it as `passed`;
 * else it goes on. A reading at the very end is still judged. Pure.
 */
export function observe(w: Watch, now: Signals): WatchStep {
  const v = judge(w.baseline, now, w.thresholds);
  const watch: Watch = { ...w, last: { ...v, at: now.at } };
  if (v.breach !== null) return { kind: 'breach', watch, breach: v.breach };
  if (now.at >= w.until) return { kind: 'passed', watch };
  return { kind: 'watching', watch };
}

/**
 * A bounded history of readings, so a watch can tell whether the SERVFAIL rate was already over
 * the limit before the apply: readings at least `windowMs / 64` apart, none older than one window
 * (about 65 at most, whatever the check interval).
 */
export class ReadingHistory {
  private readonly list: Signals[] = [];
  constructor(private readonly windowMs: number) {}

  /** Keeps `s` when the newest kept reading is old enough, and drops readings older than a window. */
  add(s: Signals): void {
    const newest = this.list.at(-1);
    if (!newest || s.at - newest.at >= this.windowMs / 64) this.list.push(s);
    while (this.list.length > 1 && this.list[0]!.at < s.at - this.windowMs) this.list.shift();
  }

  /** The oldest reading within one window before `at`, or undefined. */
  oldestSince(at: number): Signals | undefined {
    return this.list.find((s) => s.at >= at - this.windowMs && s.at <= at);
  }
}
