import type { Core } from '../../runtime/app.js';
import type { MemberRow } from '../../core/model/types.js';
import { rowsOf } from '../../core/snapshot/snapshot.js';

/**
 * What the controller watches after an apply, on this node, at one instant (docs/gitops.md
 * "Canary apply" and "Automatic rollback"): cumulative DNS answer counters (every thread) and the
 * members DNS may answer with right now. Two readings give the rates in between (`judge`).
 */
export interface Signals {
  at: number;
  /** queries answered so far (dropped ones not counted) */
  queries: number;
  /** SERVFAIL answers so far */
  servfail: number;
  /** enabled members over every pool */
  enabled: number;
  /** of those, members the active health policy calls healthy */
  healthy: number;
}

/** Limits a reading is held to; a breach names the first one crossed. */
export interface Thresholds {
  /** healthy / enabled members below this is a breach (0 turns the check off) */
  minHealthyShare: number;
  /** SERVFAIL / answered queries above this is a breach (1 turns the check off) */
  maxServfailRate: number;
  /** fewer answered queries than this between two readings: the SERVFAIL rate is not judged */
  minQueries: number;
}

/** How two readings compare: the shares, and the breach, if any. */
export interface Verdict {
  healthyShare: number;
  servfailRate: number;
  queries: number;
  /** null when within every threshold; else a sentence naming the number and its limit */
  breach: string | null;
}

/** Reads the signals of this node now. O(members): called once per watch tick, not per query. */
export function readSignals(core: Pick<Core, 'holder' | 'health' | 'ports'>, now = Date.now()): Signals {
  const totals = core.ports.dnsAnswerTotals?.() ?? { queries: 0, servfail: 0 };
  let enabled = 0;
  let healthy = 0;
  for (const m of rowsOf<MemberRow>(core.holder.current, 'member').values()) {
    if (!m.enabled) continue;
    enabled++;
    if (core.health.isHealthy(m.poolId, m.ipAddress)) healthy++;
  }
  return { at: now, queries: totals.queries, servfail: totals.servfail, enabled, healthy };
}

const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;

/**
 * Compares the reading `now` with the baseline `base` taken at the apply: the healthy share is the
 * current one (no enabled member: 1), the SERVFAIL rate is over the queries answered in between.
 * Pure.
 */
export function judge(base: Signals, now: Signals, t: Thresholds): Verdict {
  const healthyShare = now.enabled === 0 ? 1 : now.healthy / now.enabled;
  const queries = Math.max(0, now.queries - base.queries);
  const servfail = Math.max(0, now.servfail - base.servfail);
  const servfailRate = queries === 0 ? 0 : servfail / queries;
  let breach: string | null = null;
  if (healthyShare < t.minHealthyShare) {
    breach = `healthy members ${now.healthy}/${now.enabled} (${pct(healthyShare)}) below minHealthyShare ${pct(t.minHealthyShare)}`;
  } else if (queries >= t.minQueries && servfailRate > t.maxServfailRate) {
    breach = `SERVFAIL rate ${pct(servfailRate)} of ${queries} answers above maxServfailRate ${pct(t.maxServfailRate)}`;
  }
  return { healthyShare, servfailRate, queries, breach };
}
