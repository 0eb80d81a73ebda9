/**
 * `npm run bench:balancer`: weighted-round-robin selection over one tier of 100, 1,000 and 10,000
 * members at the SRV weight bound (65,535): milliseconds per whole selection (every member
 * ordered), after a warm-up, as wall time. The selection is a Fenwick tree of the remaining weights
 * past 32 members (runtime/balancer/weighted.ts), O(n log n); the unit test
 * (tests/unit/balancer/weighted.test.ts) holds it to the plain scan's draws, this measures it.
 * BENCH_BALANCER_ROUNDS sets the selections per size (default 50).
 */
import { performance } from 'node:perf_hooks';
import { MAX_WEIGHT, weightedRoundRobin } from '../../runtime/balancer/weighted.js';
import type { Candidate } from '../../runtime/balancer/types.js';

const ROUNDS = Number(process.env.BENCH_BALANCER_ROUNDS ?? 50);
const member = (i: number): Candidate => ({
  ip: `10.${(i >> 8) & 255}.${i & 255}.1`, family: 4, order: i, weight: MAX_WEIGHT, priority: 0, rumUrl: null, score: 1, rttMs: -1, lat: NaN, lon: NaN, rdata: Buffer.alloc(4),
});

for (const n of [100, 1000, 10_000]) {
  const tier = Array.from({ length: n }, (_, i) => member(i));
  for (let i = 0; i < 5; i++) weightedRoundRobin(tier, Math.random);
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    weightedRoundRobin(tier, Math.random);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(3);
  console.log(`weighted-round-robin, ${n} members at weight ${MAX_WEIGHT}: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms per selection (${ROUNDS} selections)`);
}
