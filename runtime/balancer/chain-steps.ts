import type { Candidate, RumSource, StepResult } from './types.js';

/** A candidate's node-to-member RTT (the latency step's). */
const nodeRtt = (c: Candidate) => c.rttMs;
/** A candidate's cluster-wide RTT (the `rum` fallback's, gslb-api.md §4). */
const clusterRtt = (c: Candidate) => c.clusterRttMs ?? c.rttMs;

/**
 * Latency step: candidates ordered by node-to-member probe round-trip time (`rtt`), fastest first;
 * candidates with no RTT keep their relative order after the measured ones. Pure.
 */
export function orderByLatency(cands: readonly Candidate[], rtt: (c: Candidate) => number = nodeRtt): StepResult {
  const measured = cands.filter((c) => rtt(c) >= 0);
  if (measured.length === 0) return { out: cands, reason: 'NoRttData' };
  const keyed = measured.map((c, i) => ({ c, i }));
  keyed.sort((a, b) => rtt(a.c) - rtt(b.c) || a.i - b.i);
  return { out: [...keyed.map((k) => k.c), ...cands.filter((c) => rtt(c) < 0)], reason: 'ByProbeRtt' };
}

/**
 * RUM step (terminal, picks exactly one, never fails the query): 1. fresh RUM coverage for the
 * client's subnet: the lowest measured latency among members with a rumUrl; 2. otherwise the lowest
 * probe RTT, the cluster-wide minimum when there is one (`clusterRttMs`); 3. otherwise the first candidate in current order. Empty in, empty out.
 */
export function pickByRum(cands: readonly Candidate[], client: string, rum: RumSource): StepResult {
  if (cands.length === 0) return { out: cands, reason: 'NoCandidates' };
  const measurable = cands.filter((c) => c.rumUrl !== null);
  const best = measurable.length > 0 ? rum.lowest(client, measurable) : undefined;
  const hit = best && measurable.find((c) => c.ip === best.ip);
  if (hit) return { out: [hit], reason: `RumData ${best!.latencyMs}ms` };
  const byRtt = orderByLatency(cands, clusterRtt);
  if (byRtt.reason === 'ByProbeRtt') return { out: [byRtt.out[0]!], reason: `RumFallbackProbeRtt ${clusterRtt(byRtt.out[0]!)}ms` };
  return { out: [cands[0]!], reason: 'RumFallbackOrder' };
}
