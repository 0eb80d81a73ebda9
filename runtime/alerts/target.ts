import type { AlertEvent } from './events.js';

/** The four kinds of alert target (config keys under `alerts`); also the metric label `target`. */
export type TargetType = 'webhook' | 'oncall_a' | 'oncall_b' | 'mail';

/**
 * One configured destination. The dispatcher gives each its own queue and worker, retries a
 * failed `deliver` on the backoff schedule, and counts the outcome.
 */
export interface AlertTarget {
  type: TargetType;
  /** stable name for logs, without secrets: `webhook[0] (hooks.example.com)` */
  name: string;
  /**
   * Identity of the target's queues when the target list changes at run time (alert-target rows:
   * id and revision); without it, the target's place in the file's list.
   */
  key?: string;
  /** most events one `deliver` call takes (1 for HTTP targets: one event per request) */
  batch: number;
  /** values that must never appear in a log line (keys, secrets) */
  secrets: string[];
  /** false: the event is not queued for this target at all (e.g. mail switched off) */
  accepts?(ev: AlertEvent): boolean;
  /**
   * The receiver an event goes to, when one target reaches several (mail: one relay per tenant).
   * Each lane gets its own queue and worker, so one receiver's failures and retries never delay
   * another's events; order is kept within a lane. Called after `accepts`. Default: one lane.
   */
  lane?(ev: AlertEvent): string;
  /**
   * Delivers the events; resolves when the receiver accepted them, rejects otherwise. `signal`
   * aborts at shutdown: a delivery still waiting on its receiver should give up at once.
   */
  deliver(events: AlertEvent[], signal?: AbortSignal): Promise<void>;
}

/** `host` of a URL for target names; `?` when the URL does not parse. */
export function hostOf(url: string): string {
  try { return new URL(url).host; } catch { return '?'; }
}
