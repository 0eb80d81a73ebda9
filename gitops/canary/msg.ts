import type { Signals, Thresholds, Verdict } from '../watch/signals.js';
import { isConfigMsg, parseConfigJson, type ConfigMsg } from '../../runtime/cluster/port.js';

/**
 * What makes a config-stream plan a canary plan (docs/gitops.md "Canary apply"): the nodes that
 * apply it first, how long it bakes there, the limits its signals are held to, and the git
 * revision a canary node returns to on abort.
 */
export interface CanarySpec {
  /** `node.id` values of the canary nodes */
  nodes: string[];
  /** bake time in ms, counted from the last canary node's apply */
  bakeMs: number;
  thresholds: Thresholds;
  /** ms timestamp when the leader queued the plan */
  publishedAt: number;
  /** the last git revision applied before this one, and its signer: what an abort returns to */
  previous: { revision: string; signer: string | null };
}

/** One node's verdict on a canary, as the status and the decision message show it. */
export interface CanaryNodeVerdict {
  node: string;
  /** a heartbeat from the node is younger than heartbeatTTL (this node: always) */
  live: boolean;
  /** the node reported the canary revision applied */
  applied: boolean;
  /** when the node applied it (its clock, Unix ms) */
  appliedAt: number | null;
  healthyShare: number | null;
  servfailRate: number | null;
  /** answered queries since the apply */
  queries: number | null;
  breach: string | null;
}

/** The decision on a canary revision, published on the config stream by the coordinator. */
export interface CanaryDecision {
  revision: string;
  verdict: 'promote' | 'abort';
  /** the breach (`node a: healthy members 0/2 …`) or why it was aborted otherwise; null for promote */
  reason: string | null;
  /** the coordinating node */
  node: string;
  at: number;
  /** every canary node's verdict when the decision was taken */
  verdicts: CanaryNodeVerdict[];
}

/** The body of a decision message on the config stream. */
export interface DecisionMsg { decision: CanaryDecision; node: string; at: number }

/**
 * What a canary node reports in its heartbeats while a canary revision it applied bakes: the
 * revision, when it applied it, the signals read right after the apply (the baseline) and now.
 */
export interface CanaryReport { revision: string; appliedAt: number; baseline: Signals; current: Signals }

/** The canary spec of a plan message that passed `streamItemOf` (which checked it), if it is a canary plan. */
export const canaryOf = (msg: ConfigMsg): CanarySpec | undefined => msg.canary as CanarySpec | undefined;

/** A parsed config-stream message: a plan (possibly a canary plan) or a canary decision. */
export type StreamItem = { seq: number; plan: ConfigMsg } | { seq: number; decision: CanaryDecision };

/** The ledger revision under which a decision message is recorded (a decision is recorded once). */
export const decisionKey = (d: Pick<CanaryDecision, 'revision' | 'verdict'>): string => `canary-${d.verdict}:${d.revision}`;

const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isStr = (v: unknown): v is string => typeof v === 'string' && v !== '';

/** Shape check of a canary spec. */
export function isCanarySpec(v: unknown): v is CanarySpec {
  const s = v as Partial<CanarySpec> | undefined;
  if (typeof s !== 'object' || s === null) return false;
  const t = s.thresholds as Partial<Thresholds> | undefined;
  return Array.isArray(s.nodes) && s.nodes.length > 0 && s.nodes.every(isStr) && isNum(s.bakeMs) && isNum(s.publishedAt)
    && typeof t === 'object' && t !== null && isNum(t.minHealthyShare) && isNum(t.maxServfailRate) && isNum(t.minQueries)
    && typeof s.previous === 'object' && s.previous !== null && isStr(s.previous.revision);
}

const numOrNull = (v: unknown) => v === null || isNum(v);

/** Shape check of one node's verdict in a decision. */
function isNodeVerdict(v: unknown): v is CanaryNodeVerdict {
  const n = v as Partial<CanaryNodeVerdict> | undefined;
  return typeof n === 'object' && n !== null && isStr(n.node) && typeof n.live === 'boolean' && typeof n.applied === 'boolean'
    && numOrNull(n.appliedAt) && numOrNull(n.healthyShare) && numOrNull(n.servfailRate) && numOrNull(n.queries)
    && (n.breach === null || typeof n.breach === 'string');
}

/** Shape check of a decision. */
export function isCanaryDecision(v: unknown): v is CanaryDecision {
  const d = v as Partial<CanaryDecision> | undefined;
  return typeof d === 'object' && d !== null && isStr(d.revision) && (d.verdict === 'promote' || d.verdict === 'abort')
    && (d.reason === null || typeof d.reason === 'string') && isStr(d.node) && isNum(d.at)
    && Array.isArray(d.verdicts) && d.verdicts.every(isNodeVerdict);
}

const isSignals = (v: unknown): boolean => {
  const s = v as Partial<Record<keyof Signals, unknown>> | undefined;
  return typeof s === 'object' && s !== null && isNum(s.at) && isNum(s.queries) && isNum(s.servfail) && isNum(s.enabled) && isNum(s.healthy);
};

/** Shape check of a canary report from a peer's heartbeat (a malformed one is ignored). */
export function isCanaryReport(v: unknown): v is CanaryReport {
  const r = v as Partial<CanaryReport> | undefined;
  return typeof r === 'object' && r !== null && isStr(r.revision) && isNum(r.appliedAt) && isSignals(r.baseline) && isSignals(r.current);
}

/**
 * Parses a config-stream message's bytes. Returns undefined for anything that is neither a plan
 * nor a decision (bad JSON, wrong shape, a canary plan whose spec is malformed): no node can use
 * it, so every node skips it alike.
 */
export function parseStreamItem(seq: number, data: Uint8Array): StreamItem | undefined {
  return streamItemOf(seq, parseConfigJson(data));
}

/** `parseStreamItem` of a message already parsed as JSON. */
export function streamItemOf(seq: number, body: unknown): StreamItem | undefined {
  const b = body as { decision?: unknown; canary?: unknown } | null;
  if (typeof b === 'object' && b !== null && 'decision' in b) return isCanaryDecision(b.decision) ? { seq, decision: b.decision } : undefined;
  if (!isConfigMsg(body)) return undefined;
  if (body.canary !== undefined && !isCanarySpec(body.canary)) return undefined;
  if (body.meta !== undefined && (typeof body.meta !== 'object' || body.meta === null || Array.isArray(body.meta))) return undefined;
  return { seq, plan: body };
}

/** The verdict columns of a node status, from a judge verdict (or none yet). */
export function verdictFields(v: Verdict | undefined): Pick<CanaryNodeVerdict, 'healthyShare' | 'servfailRate' | 'queries' | 'breach'> {
  return v ? { healthyShare: v.healthyShare, servfailRate: v.servfailRate, queries: v.queries, breach: v.breach } : { healthyShare: null, servfailRate: null, queries: null, breach: null };
}
