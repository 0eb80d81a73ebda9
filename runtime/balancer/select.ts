import type { Algorithm, AllUnhealthyPolicy, ChainStep } from '../../core/model/types.js';
import { endpointFirst, matchAsnRule, type PreparedAsnRule } from './asn.js';
import { orderByLatency, pickByRum } from './chain-steps.js';
import { failover } from './failover.js';
import { orderByDistance } from './geo-ip.js';
import { mapFile, type MapRule } from './map-file.js';
import { roundRobin } from './round-robin.js';
import { sortByScore } from './score-sort.js';
import type { Candidate, SelectContext, StepResult } from './types.js';
import { weightedRoundRobin } from './weighted.js';

/** What a selection needs to know about a service (precomputed at snapshot-swap time). */
export interface SelectSpec {
  algorithm: Algorithm;
  chain: readonly ChainStep[];
  whenAllUnhealthy: AllUnhealthyPolicy;
  mapRules: readonly MapRule[];
  asnRules: readonly PreparedAsnRule[];
}

/** The outcome of a selection: the ordered answer, or NODATA / SERVFAIL. */
export interface Selection {
  outcome: 'answer' | 'nodata' | 'servfail';
  list: readonly Candidate[];
  /** true when the answer depends on the client address (ECS scope = source prefix, RFC 7871 §7.2.1) */
  clientScoped: boolean;
}

/**
 * Storage a caller lends `selectCandidates` so that a selection over the common algorithms
 * (round-robin, weighted-round-robin, failover, and geo-ip, map-file and asn when they fall back
 * to round-robin) allocates no object or array: the result object, the algorithm's output array
 * and one step result are reused. What a selection returns is valid until the next selection with the same
 * scratch; the answer path owns one per answerer.
 */
export class SelectScratch {
  readonly selection: Selection = { outcome: 'answer', list: [], clientScoped: false };
  /** the algorithm's output order */
  readonly order: Candidate[] = [];
  readonly step: StepResult = { out: [], reason: '' };
}

const ips = (l: readonly Candidate[]) => l.map((c) => c.ip);

function stepResult(s: SelectScratch | undefined, out: readonly Candidate[], reason: string): StepResult {
  if (!s) return { out, reason };
  s.step.out = out;
  s.step.reason = reason;
  return s.step;
}

function selection(s: SelectScratch | undefined, outcome: Selection['outcome'], list: readonly Candidate[], clientScoped: boolean): Selection {
  if (!s) return { outcome, list, clientScoped };
  const r = s.selection;
  r.outcome = outcome;
  r.list = list;
  r.clientScoped = clientScoped;
  return r;
}

function record(ctx: SelectContext, step: string, input: readonly Candidate[], r: StepResult): readonly Candidate[] {
  ctx.trace?.push({ step, input: ips(input), output: ips(r.out), reason: r.reason });
  return r.out;
}

/**
 * True when the answer depends on the client address: the algorithm or a chain step reads it
 * (ECS scope = source prefix, RFC 7871 §7.2.1). Selections of other services never read
 * `ctx.client`.
 */
export function readsClient(spec: Pick<SelectSpec, 'algorithm' | 'chain'>): boolean {
  return spec.algorithm === 'geo-ip' || spec.algorithm === 'map-file' || spec.algorithm === 'asn' || spec.chain.length > 0;
}

/** True when the algorithm or chain reads the client's location. */
export function needsGeo(spec: Pick<SelectSpec, 'algorithm' | 'chain'>): boolean {
  return spec.algorithm === 'geo-ip' || spec.chain.includes('geo-ip');
}

function geoStep(cands: readonly Candidate[], ctx: SelectContext, seq: number | undefined, s?: SelectScratch): StepResult {
  const loc = ctx.locate(ctx.client);
  if (!loc) {
    // Unknown client: the algorithm falls back to round-robin order; as a chain step it keeps the order.
    return seq === undefined ? { out: cands, reason: 'UnknownClientLocation' } : stepResult(s, roundRobin(cands, seq, s?.order), 'UnknownClientLocationRoundRobin');
  }
  return { out: orderByDistance(cands, loc), reason: ctx.trace ? `ByDistance from ${loc.lat.toFixed(2)},${loc.lon.toFixed(2)}` : 'ByDistance' };
}

function algorithmStep(spec: SelectSpec, cands: readonly Candidate[], ctx: SelectContext, s: SelectScratch | undefined): StepResult {
  const into = s?.order;
  switch (spec.algorithm) {
    // Reasons with details are built only when tracing (POST /simulate): no string work per query.
    case 'round-robin': return stepResult(s, roundRobin(cands, ctx.seq, into), ctx.trace ? `Rotation ${ctx.seq % Math.max(1, cands.length)}` : 'Rotation');
    case 'weighted-round-robin': return stepResult(s, weightedRoundRobin(cands, ctx.rand, into), 'WeightedRandom');
    case 'geo-ip': return geoStep(cands, ctx, ctx.seq, s);
    case 'map-file': return mapFile(cands, spec.mapRules, ctx.client, ctx.trace !== undefined);
    case 'failover': return stepResult(s, failover(cands, into), 'LowestPriority');
    case 'asn': {
      const info = ctx.asnOf(ctx.client);
      const m = info && matchAsnRule(spec.asnRules, info);
      const out = m && endpointFirst(cands, m.rule.endpoint);
      if (out) return { out, reason: ctx.trace ? `RuleMatched ${m!.by} ${m!.by === 'asn' ? info!.asn : m!.rule.org} -> ${m!.rule.endpoint}` : 'RuleMatched' };
      const why = !info ? 'UnknownClientAsn' : m ? 'RuleEndpointUnavailable' : 'NoRuleMatched';
      return stepResult(s, roundRobin(cands, ctx.seq, into), ctx.trace ? `${why}RoundRobin` : why);
    }
  }
}

/**
 * Runs one service's selection (gslb-api.md §2): health filter (with the all-unhealthy policy),
 * score sort before round-robin / weighted / geo-ip, the algorithm, then the service's filter
 * chain (`geo-ip`, `latency`, terminal `rum`). `enabled` are the enabled members of the queried
 * address family in storage order, `healthy` the subset DNS may answer with. Pure: randomness and
 * rotation come from `ctx`; with `ctx.trace` each step's input, output and reason is recorded.
 * With `scratch` the result (and its list) is that scratch's, valid until its next use; without,
 * everything returned is new.
 */
export function selectCandidates(spec: SelectSpec, enabled: readonly Candidate[], healthy: readonly Candidate[], ctx: SelectContext, scratch?: SelectScratch): Selection {
  const clientScoped = readsClient(spec);
  if (enabled.length === 0) {
    if (ctx.trace) record(ctx, 'health', enabled, { out: enabled, reason: 'NoEnabledMembers' });
    return selection(scratch, 'nodata', enabled, false);
  }
  let cur: readonly Candidate[] = healthy;
  if (healthy.length === 0) {
    const p = spec.whenAllUnhealthy;
    if (ctx.trace) record(ctx, 'health', enabled, { out: p === 'all' ? enabled : healthy, reason: `AllUnhealthy policy=${p}` });
    if (p === 'nodata') return selection(scratch, 'nodata', healthy, false);
    if (p === 'servfail') return selection(scratch, 'servfail', healthy, false);
    cur = enabled;
  } else {
    if (ctx.trace) record(ctx, 'health', enabled, { out: healthy, reason: healthy.length === enabled.length ? 'AllHealthy' : `Filtered ${enabled.length - healthy.length} unhealthy` });
  }
  const algo = spec.algorithm;
  if (algo === 'round-robin' || algo === 'weighted-round-robin' || algo === 'geo-ip') {
    const sorted = sortByScore(cur);
    if (ctx.trace) record(ctx, 'score', cur, { out: sorted, reason: sorted === cur ? 'AlreadyInScoreOrder' : 'SortedByScore' });
    cur = sorted;
  }
  const res = algorithmStep(spec, cur, ctx, scratch);
  cur = ctx.trace ? record(ctx, algo, cur, res) : res.out;
  for (const step of spec.chain) {
    if (cur.length === 0) break;
    if (step === 'geo-ip') cur = record(ctx, 'geo-ip', cur, geoStep(cur, ctx, undefined));
    else if (step === 'latency') cur = record(ctx, 'latency', cur, orderByLatency(cur));
    else {
      cur = record(ctx, 'rum', cur, pickByRum(cur, ctx.client, ctx.rum));
      break; // rum is terminal
    }
  }
  return selection(scratch, cur.length > 0 ? 'answer' : 'nodata', cur, clientScoped);
}
