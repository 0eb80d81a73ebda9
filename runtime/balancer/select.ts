import type { Algorithm, AllUnhealthyPolicy, ChainStep } from '../model/types.js';
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

const ips = (l: readonly Candidate[]) => l.map((c) => c.ip);

function record(ctx: SelectContext, step: string, input: readonly Candidate[], r: StepResult): readonly Candidate[] {
  ctx.trace?.push({ step, input: ips(input), output: ips(r.out), reason: r.reason });
  return r.out;
}

/** True when the algorithm or chain reads the client's location. */
export function needsGeo(spec: Pick<SelectSpec, 'algorithm' | 'chain'>): boolean {
  return spec.algorithm === 'geo-ip' || spec.chain.includes('geo-ip');
}

function geoStep(cands: readonly Candidate[], ctx: SelectContext, seq: number | undefined): StepResult {
  const loc = ctx.locate(ctx.client);
  if (!loc) {
    // Unknown client: the algorithm falls back to round-robin order; as a chain step it keeps the order.
    return seq === undefined ? { out: cands, reason: 'UnknownClientLocation' } : { out: roundRobin(cands, seq), reason: 'UnknownClientLocationRoundRobin' };
  }
  return { out: orderByDistance(cands, loc), reason: ctx.trace ? `ByDistance from ${loc.lat.toFixed(2)},${loc.lon.toFixed(2)}` : 'ByDistance' };
}

function algorithmStep(spec: SelectSpec, cands: readonly Candidate[], ctx: SelectContext): StepResult {
  switch (spec.algorithm) {
    // Reasons with details are built only when tracing (POST /simulate): no string work per query.
    case 'round-robin': return { out: roundRobin(cands, ctx.seq), reason: ctx.trace ? `Rotation ${ctx.seq % Math.max(1, cands.length)}` : 'Rotation' };
    case 'weighted-round-robin': return { out: weightedRoundRobin(cands, ctx.rand), reason: 'WeightedRandom' };
    case 'geo-ip': return geoStep(cands, ctx, ctx.seq);
    case 'map-file': return mapFile(cands, spec.mapRules, ctx.client, ctx.trace !== undefined);
    case 'failover': return { out: failover(cands), reason: 'LowestPriority' };
    case 'asn': {
      const info = ctx.asnOf(ctx.client);
      const m = info && matchAsnRule(spec.asnRules, info);
      const out = m && endpointFirst(cands, m.rule.endpoint);
      if (out) return { out, reason: ctx.trace ? `RuleMatched ${m!.by} ${m!.by === 'asn' ? info!.asn : m!.rule.org} -> ${m!.rule.endpoint}` : 'RuleMatched' };
      const why = !info ? 'UnknownClientAsn' : m ? 'RuleEndpointUnavailable' : 'NoRuleMatched';
      return { out: roundRobin(cands, ctx.seq), reason: ctx.trace ? `${why}RoundRobin` : why };
    }
  }
}

/**
 * Runs one service's selection (gslb-api.md §2): health filter (with the all-unhealthy policy),
 * score sort before round-robin / weighted / geo-ip, the algorithm, then the service's filter
 * chain (`geo-ip`, `latency`, terminal `rum`). `enabled` are the enabled members of the queried
 * address family in storage order, `healthy` the subset DNS may answer with. Pure: randomness and
 * rotation come from `ctx`; with `ctx.trace` each step's input, output and reason is recorded.
 */
export function selectCandidates(spec: SelectSpec, enabled: readonly Candidate[], healthy: readonly Candidate[], ctx: SelectContext): Selection {
  const clientScoped = spec.algorithm === 'geo-ip' || spec.algorithm === 'map-file' || spec.algorithm === 'asn' || spec.chain.length > 0;
  if (enabled.length === 0) {
    record(ctx, 'health', enabled, { out: enabled, reason: 'NoEnabledMembers' });
    return { outcome: 'nodata', list: enabled, clientScoped: false };
  }
  let cur: readonly Candidate[] = healthy;
  if (healthy.length === 0) {
    const p = spec.whenAllUnhealthy;
    if (ctx.trace) record(ctx, 'health', enabled, { out: p === 'all' ? enabled : healthy, reason: `AllUnhealthy policy=${p}` });
    if (p === 'nodata') return { outcome: 'nodata', list: healthy, clientScoped: false };
    if (p === 'servfail') return { outcome: 'servfail', list: healthy, clientScoped: false };
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
  const res = algorithmStep(spec, cur, ctx);
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
  return { outcome: cur.length > 0 ? 'answer' : 'nodata', list: cur, clientScoped };
}
