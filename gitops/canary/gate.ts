import type { ConfigMsg } from '../../runtime/cluster/port.js';
import { canaryOf, type CanaryDecision, type StreamItem } from './msg.js';

/**
 * What the consumer does with one stream message (docs/cluster.md "Canary plans in the stream"):
 * - `apply`: apply the plan (an ordinary plan, or a promoted canary plan) and record it;
 * - `canary`: this node is a canary node of the plan: apply it now, record it, and watch it;
 * - `hold`: a canary plan this node must not apply yet: note it, record nothing, and hold it and
 *   every later message until its decision arrives;
 * - `skip`: an aborted canary plan this node never applied: record it as skipped;
 * - `decide`: record a decision (a canary node that applied an aborted plan undoes it here).
 */
export type GateStep =
  | { op: 'apply'; seq: number; msg: ConfigMsg }
  | { op: 'canary'; seq: number; msg: ConfigMsg }
  | { op: 'hold'; seq: number; msg: ConfigMsg }
  | { op: 'skip'; seq: number; msg: ConfigMsg }
  | { op: 'decide'; seq: number; decision: CanaryDecision };

/** The consumer's hold: the canary revision held, and the messages from it on (the canary plan first). */
export interface GateState { holding?: { revision: string; seq: number; items: StreamItem[] } }

/** What the gate needs to know about the node and earlier decisions. */
export interface GateEnv {
  /** this node's `node.id` */
  self: string;
  /** the decision already recorded for a canary revision (a plan published twice), if any */
  decided: (revision: string) => 'promote' | 'abort' | undefined;
}

/** A fresh gate: nothing held (each consumer starts from the ledger, so from a fresh gate). */
export const OPEN_GATE: GateState = {};

/**
 * Admits one stream message and returns the steps to run now, in order, and the next state. Pure.
 * Order is preserved: while a canary plan is held, every later message is held behind it and is
 * released, in stream order, by the decision for that revision (`promote`: the plan is applied
 * first; `abort`: it is skipped); a released message may start a new hold. A decision for any
 * other revision arriving while holding is held too, so nothing after the held plan is recorded
 * before it (a restart re-reads from the held plan).
 */
export function admit(state: GateState, item: StreamItem, env: GateEnv): { state: GateState; steps: GateStep[] } {
  const h = state.holding;
  if (h) {
    const items = [...h.items, item];
    if (!('decision' in item) || item.decision.revision !== h.revision) return { state: { holding: { ...h, items } }, steps: [] };
    const [first, ...rest] = items;
    const msg = (first as { plan: ConfigMsg }).plan;
    const steps: GateStep[] = [item.decision.verdict === 'promote' ? { op: 'apply', seq: h.seq, msg } : { op: 'skip', seq: h.seq, msg }];
    let next: GateState = OPEN_GATE;
    for (const r of rest) {
      const out = admit(next, r, env);
      next = out.state;
      steps.push(...out.steps);
    }
    return { state: next, steps };
  }
  if ('decision' in item) return { state, steps: [{ op: 'decide', seq: item.seq, decision: item.decision }] };
  const msg = item.plan;
  const spec = canaryOf(msg);
  if (!spec) return { state, steps: [{ op: 'apply', seq: item.seq, msg }] };
  const decided = env.decided(msg.plan.revision);
  if (decided === 'abort') return { state, steps: [{ op: 'skip', seq: item.seq, msg }] };
  if (decided === 'promote') return { state, steps: [{ op: 'apply', seq: item.seq, msg }] };
  if (spec.nodes.includes(env.self)) return { state, steps: [{ op: 'canary', seq: item.seq, msg }] };
  return { state: { holding: { revision: msg.plan.revision, seq: item.seq, items: [item] } }, steps: [{ op: 'hold', seq: item.seq, msg }] };
}
