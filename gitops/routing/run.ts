import dnsPacket from 'dns-packet';
import { seededRandom } from '../seeded-random.js';
import type { Config } from '../../runtime/config/types.js';
import { Answerer, buildQueryPacket, lookupName, NameMatch, QTYPES, rcodeName, type GeoDeps, type PendingAnswer } from '../../runtime/dns/port.js';
import { needsGeo } from '../../runtime/balancer/select.js';
import { NO_RUM } from '../../runtime/balancer/types.js';
import { HealthView } from '../../runtime/ports/health-view.js';
import { DEFAULT_TENANT, type PoolRow } from '../../core/model/types.js';
import { rowsOf, type Snapshot } from '../../core/snapshot/snapshot.js';
import { runAtOnce, runSliced, type Slicer } from '../../core/apply/slicer.js';
import { formatProblem } from '../../runtime/config/problem.js';
import { proposedSnapshotSteps } from '../../core/apply/proposed.js';
import type { Plan } from '../../core/plan/types.js';
import { toFqdn } from '../../runtime/tenancy/names.js';
import type { RoutingCase } from './kind.js';
import { describeExpect, describeObserved, judgeCase, type Observed } from './judge.js';

/** The outcome of one case. */
export interface CaseResult {
  name: string;
  test: string;
  file: string;
  line: number;
  col: number;
  status: 'passed' | 'failed' | 'skipped';
  expected: string;
  /** what the query got (empty when skipped) */
  got: string;
  /** why a case was skipped or could not run */
  note: string | null;
}

/** Every case's result and the counts. */
export interface RoutingRun { passed: number; failed: number; skipped: number; results: CaseResult[] }

/** The client address of a case without `clientIp` (TEST-NET-1, RFC 5737). */
export const DEFAULT_CLIENT = '192.0.2.1';
/** The seed of the random source every case starts from (weighted draws). */
export const ROUTING_SEED = 0x9e3779b9;

/** Options of a run: the daemon config and, on a daemon, its loaded geo databases. */
export interface RoutingOptions {
  config: Config;
  /** the daemon's databases (core.ports.dnsGeo); absent offline: geo-dependent cases are skipped */
  geo?: GeoDeps | undefined;
  /** how long a case may wait for a database that is still loading; default 10 s */
  loadDeadlineMs?: number;
  /**
   * On the DNS thread (the daemon): the zone index is built, and the cases run, in slices of this
   * slicer, so a large state does not stop DNS; absent (the CLI), at once.
   */
  slicer?: Slicer;
}

/**
 * Runs routing test cases against `snapshot` (the state the revision would produce) through the DNS
 * server's own answer path: each case's query is encoded as a resolver would send it, answered by
 * an `Answerer` over that snapshot with a health view where every member is healthy except what
 * the case assumes, and the reply decoded — the selection code DNS runs, no socket. Deterministic:
 * the round-robin counter and a seeded random source restart for every case. A case whose service
 * needs a geo database that is not available (offline) is skipped with a note. Never throws for a
 * case: a case that cannot run fails with a note.
 */
export async function runRoutingCases(cases: readonly RoutingCase[], snapshot: Snapshot, opts: RoutingOptions): Promise<RoutingRun> {
  const run: RoutingRun = { passed: 0, failed: 0, skipped: 0, results: [] };
  if (cases.length === 0) return run;
  const cfg = opts.config;
  const geo: GeoDeps = opts.geo ?? { city: undefined, asn: undefined, endpointLocations: cfg.loadbalancer.geoip.endpointLocations };
  const health = new HealthView();
  // restarted per case, so answers do not depend on case order
  const rng = seededRandom(ROUTING_SEED);
  const answerer = new Answerer({ config: cfg, health, snapshot: () => snapshot, geo, rum: NO_RUM, rand: rng.rand, serial: () => 0 });
  const slicer = opts.slicer;
  if (slicer) answerer.adoptIndex(await runSliced(answerer.indexSteps(snapshot, 0), slicer));
  const pools = new Map<string, string>();
  for (const p of rowsOf<PoolRow>(snapshot, 'pool').values()) if (!pools.has(p.name) || p.tenantId === DEFAULT_TENANT) pools.set(p.name, p.id);
  const match = new NameMatch();
  for (const c of cases) {
    await slicer?.maybePause();
    const expected = describeExpect(c.expect);
    const result = (status: CaseResult['status'], got: string, note: string | null = null) => {
      run[status]++;
      run.results.push({ name: c.name, test: c.test, file: c.file, line: c.line, col: c.col, status, expected, got, note });
    };
    for (const [poolId] of [...health.pools()]) health.delete(poolId);
    const unknown = c.assumeHealth.find((h) => !pools.has(h.pool));
    if (unknown) { result('failed', '', `assumeHealth names pool "${unknown.pool}", which the revision does not have`); continue; }
    for (const h of c.assumeHealth) health.set(pools.get(h.pool)!, h.ipAddress, { healthy: h.healthy, score: h.healthy ? 1 : 0, lastChecked: 0, rttMs: -1, node: 'routing-test' });
    const plan = lookupName(answerer.index(), toFqdn(c.query.name).toLowerCase(), match).plan;
    const missing = plan && needsGeo(plan) && !geo.city ? 'the City database (loadbalancer.geoip.dbPath)'
      : plan && plan.algorithm === 'asn' && !geo.asn ? 'the ASN database (loadbalancer.asn.dbPath)' : undefined;
    if (missing) { result('skipped', '', `needs ${missing}, which is not available here`); continue; }
    rng.reset(ROUTING_SEED);
    answerer.resetSequence();
    const got = await ask(answerer, c, opts.loadDeadlineMs ?? 10_000);
    result(judgeCase(c.expect, got) ? 'passed' : 'failed', describeObserved(got));
  }
  return run;
}

/** One case's query through the answerer, waiting (bounded) for a database that is loading. */
async function ask(answerer: Answerer, c: RoutingCase, deadlineMs: number): Promise<Observed> {
  const packet = buildQueryPacket(c.query.name, QTYPES[c.query.type ?? 'A']!, c.query.ecsSubnet);
  const client = c.query.clientIp ?? DEFAULT_CLIENT;
  let r = answerer.handle(packet, client, false, true);
  if (r && !Buffer.isBuffer(r)) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([(r as PendingAnswer).wait, new Promise<void>((res) => { timer = setTimeout(res, deadlineMs); })]);
    clearTimeout(timer);
    r = answerer.handle(packet, client, false, false);
  }
  const reply = dnsPacket.decode((r as Buffer).subarray(2));
  const answers = (reply.answers ?? []).filter((a) => a.type === 'A' || a.type === 'AAAA').map((a) => String((a as { data: unknown }).data));
  return { rcode: rcodeName((reply.flags ?? 0) & 0xf), answers };
}

/**
 * A failed or skipped case as a located problem line: `file:line:1: routing test "test/case"
 * failed: expected …; got … (routing-test)`, or `… skipped: needs … (routing-test-skipped)`.
 */
export function describeResult(r: CaseResult): string {
  const what = `routing test "${r.test}/${r.name}"`;
  const message = r.status === 'skipped' ? `${what} skipped: ${r.note ?? ''}`
    : r.note ? `${what} ${r.status}: ${r.note}` : `${what} ${r.status}: expected ${r.expected}; got ${r.got}`;
  return formatProblem({ file: r.file, line: r.line, col: r.col, message, rule: r.status === 'skipped' ? 'routing-test-skipped' : 'routing-test' });
}

/**
 * Runs `cases` against the state `plan` would produce from `actual` (the plan's changes laid over
 * it, off to the side: nothing is applied). See runRoutingCases.
 */
export async function runRoutingCasesForPlan(cases: readonly RoutingCase[], actual: Snapshot, plan: Plan, opts: RoutingOptions): Promise<RoutingRun> {
  if (cases.length === 0) return runRoutingCases(cases, actual, opts);
  const steps = proposedSnapshotSteps(actual, plan);
  return runRoutingCases(cases, opts.slicer ? await runSliced(steps, opts.slicer) : runAtOnce(steps), opts);
}
