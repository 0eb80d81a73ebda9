import { judge } from '../watch/signals.js';
import { verdictFields, type CanaryNodeVerdict, type CanaryReport, type CanarySpec } from './msg.js';

/** What the coordinator knows about one canary node: its latest report (if any) and whether it is live. */
export interface NodeReport { node: string; live: boolean; report: CanaryReport | undefined }

/** The coordinator's conclusion at one instant. */
export interface CanaryJudgement {
  verdict: 'promote' | 'abort' | 'wait';
  /** abort: the first breach, prefixed with its node; wait: what it waits for; promote: null */
  reason: string | null;
  /** when the bake ends (the last canary node's apply + bakeMs); null until every node applied it */
  until: number | null;
  /** canary nodes that have not reported the revision applied */
  waitingFor: string[];
  nodes: CanaryNodeVerdict[];
}

/**
 * Decides a baking canary from its spec, the canary nodes' reports and the time. Pure.
 * - A report of the revision whose signals breach the spec's thresholds (`judge` against the
 *   node's own baseline) aborts, even before every node reported; the reason names the node.
 *   A report from a node that is no longer live still counts (its last reading breached).
 * - Promote once every canary node reported the revision applied and `now` reached the bake end:
 *   the latest of their apply times plus `bakeMs` (wall clocks of the nodes).
 * - Otherwise wait. A canary node that never reports keeps the fan-out waiting (status names it).
 */
export function decideCanary(revision: string, spec: CanarySpec, reports: readonly NodeReport[], now: number): CanaryJudgement {
  const byNode = new Map(reports.map((r) => [r.node, r]));
  const nodes: CanaryNodeVerdict[] = [];
  let breach: string | null = null;
  const waitingFor: string[] = [];
  let lastApply = 0;
  for (const node of spec.nodes) {
    const r = byNode.get(node);
    const rep = r?.report?.revision === revision ? r.report : undefined;
    const v = rep ? judge(rep.baseline, rep.current, spec.thresholds) : undefined;
    nodes.push({ node, live: r?.live ?? false, applied: rep !== undefined, appliedAt: rep?.appliedAt ?? null, ...verdictFields(v) });
    if (v?.breach && breach === null) breach = `node ${node}: ${v.breach}`;
    if (rep) lastApply = Math.max(lastApply, rep.appliedAt);
    else waitingFor.push(node);
  }
  const until = waitingFor.length === 0 ? lastApply + spec.bakeMs : null;
  if (breach !== null) return { verdict: 'abort', reason: breach, until, waitingFor, nodes };
  if (until !== null && now >= until) return { verdict: 'promote', reason: null, until, waitingFor, nodes };
  const reason = waitingFor.length
    ? `waiting for ${waitingFor.join(', ')} to report the revision applied${waitingFor.some((n) => !byNode.get(n)?.live) ? ' (not live)' : ''}`
    : 'every canary node applied it; no breach so far';
  return { verdict: 'wait', reason, until, waitingFor, nodes };
}
