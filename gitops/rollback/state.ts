import type { Config } from '../../runtime/config/types.js';
import { parseDuration } from '../../runtime/config/duration.js';
import type { Thresholds } from '../watch/signals.js';
import type { Watch } from './window.js';

/** How a breach ended: the last good revision re-applied, nothing to re-apply, or the re-apply failed. */
export type RollbackResult = 'RolledBack' | 'NoGoodRevision' | 'RollbackFailed';

/** The last breach and what was done about it. */
export interface RollbackRecord {
  /** the revision that breached */
  from: string;
  /** the revision re-applied; null when none was (NoGoodRevision, RollbackFailed) */
  to: string | null;
  /** the breach, as `judge` names it */
  reason: string;
  at: number;
  result: RollbackResult;
  message: string;
}

/** A revision rolled back: the source step skips it as the branch head until a newer commit arrives. */
export interface PinnedOut { revision: string; rolledBackTo: string; reason: string; at: number }

/** A breach waiting for the loop to run the rollback (persisted: a restart still rolls back). */
export interface PendingRollback { from: string; to: string; reason: string; at: number }

/**
 * The rollback part of the controller status (`rollback` in `GET /gitops/status`), persisted with
 * it (docs/gitops.md "Automatic rollback").
 */
export interface RollbackStatus {
  enabled: boolean;
  /** the revision a breach rolls back to: the last one whose window passed (every applied one while rollback is off) */
  lastGoodRevision: string | null;
  /** the watch in progress */
  watch: Watch | null;
  pending: PendingRollback | null;
  lastRollback: RollbackRecord | null;
  pinnedOut: PinnedOut[];
}

/** gitops.rollback with durations in ms. */
export interface RollbackOptions { enabled: boolean; windowMs: number; checkIntervalMs: number; thresholds: Thresholds }

/** The options of a validated config (durations are checked there). */
export function rollbackOptions(c: Config): RollbackOptions {
  const rb = c.gitops.rollback;
  return {
    enabled: rb.enabled,
    windowMs: parseDuration(rb.window) ?? 300_000,
    checkIntervalMs: parseDuration(rb.checkInterval) ?? 5000,
    thresholds: { minHealthyShare: rb.minHealthyShare, maxServfailRate: rb.maxServfailRate, minQueries: rb.minQueries },
  };
}

/**
 * The state at start: the persisted one, or for a node that has none yet, the applied revision as
 * the last good one (it has been serving).
 */
export function initialRollbackStatus(enabled: boolean, prev: RollbackStatus | undefined, lastApplied: string | undefined): RollbackStatus {
  if (prev) return { ...prev, enabled, pinnedOut: [...prev.pinnedOut] };
  return { enabled, lastGoodRevision: lastApplied ?? null, watch: null, pending: null, lastRollback: null, pinnedOut: [] };
}
