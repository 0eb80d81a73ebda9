import type { CityResponse } from 'maxmind';
import { seededRandom } from '../seeded-random.js';
import type { Config } from '../../runtime/config/types.js';
import type { HealthView } from '../../runtime/ports/health-view.js';
import { NO_RUM, type StepTrace } from '../../runtime/balancer/types.js';
import { Answerer, buildQueryPacket, QTYPES, rcodeName, type GeoDeps } from '../../runtime/dns/port.js';
import { asnOfIp } from '../../runtime/geo/lookup.js';
import type { MmdbSource } from '../../runtime/geo/mmdb-source.js';
import { getRow, type Snapshot } from '../../core/snapshot/snapshot.js';
import type { PoolRow } from '../../core/model/types.js';
import { runAtOnce } from '../../core/apply/slicer.js';
import { toFqdn } from '../../runtime/tenancy/names.js';
import { answersDiffer, isOrdered, type Answered } from './compare.js';
import type { LoggedQuery } from './query-log.js';

/** What the selection reads besides the snapshot: the daemon's config, geo databases and health. */
export interface ReplayEnv {
  config: Config;
  geo: GeoDeps;
  /** the health the answers are computed with (offline: an empty view, every member healthy) */
  health: HealthView;
}

/** Changed answers within one group of queries. */
export interface ReplayGroup { key: string; queries: number; changed: number; percent: number }

/** One query whose answer changes, as the client would see it. */
export interface ReplayExample { name: string; type: string; client: string; before: string; after: string; count: number }

/** The outcome of replaying a query log against the current and the proposed state. */
export interface ReplayReport {
  /** queries replayed */
  queries: number;
  /** log lines left out (not a query, a type without a selection, a bad address) */
  skipped: number;
  changed: number;
  /** changed / queries × 100, two decimals; 0 without queries */
  percent: number;
  /** whether the City and ASN databases were there: without them the groups say `unknown` */
  geo: { country: boolean; asn: boolean };
  byCountry: ReplayGroup[];
  byAsn: ReplayGroup[];
  /** by the service answering the name (current state, else proposed): `www (pool eu-west)` */
  byService: ReplayGroup[];
  /** the most frequent changed answers, at most 20 */
  examples: ReplayExample[];
}

/**
 * A snapshot's answer path, with its own deterministic random source; its zone index is built as
 * steps here (so a large state is indexed in slices, not on the first query).
 */
function* side(snapshot: Snapshot, env: ReplayEnv) {
  // restarted from a seed before every query, so both sides draw alike
  const rng = seededRandom();
  const answerer = new Answerer({ config: env.config, health: env.health, snapshot: () => snapshot, geo: env.geo, rum: NO_RUM, rand: rng.rand, serial: () => 0 });
  answerer.adoptIndex(yield* answerer.indexSteps(snapshot, 0));
  return {
    ask(packet: Buffer, src: string, seed: number): Answered {
      rng.reset(seed);
      const steps: StepTrace[] = [];
      answerer.handle(packet, src, false, false, steps);
      return { rcode: answerer.lastRcode, ips: answerer.lastAnswers.map((c) => c.ip), ordered: isOrdered(steps) };
    },
  };
}

function countryOf(city: MmdbSource<CityResponse> | undefined, ip: string): string {
  try { return city?.reader?.get(ip)?.country?.iso_code ?? 'unknown'; } catch { return 'unknown'; }
}

const describe = (a: Answered) => `${rcodeName(a.rcode)}${a.ips.length ? ` ${a.ips.join(',')}` : ''}`;

function serviceLabel(current: Snapshot, proposed: Snapshot, name: string): string {
  for (const s of [current, proposed]) {
    const svc = s.serviceByDomain.get(name);
    if (!svc) continue;
    const pool = svc.poolId ? getRow<PoolRow>(s, 'pool', svc.poolId) : undefined;
    return `${svc.name} (pool ${pool?.name ?? 'none'})`;
  }
  return '(no service)';
}

/**
 * Replays each logged query (client address, ECS subnet, name, type) against `current` and
 * `proposed` through the DNS server's own decoder and selection (an Answerer per snapshot, no
 * sockets), and counts the queries whose answer a client would see change (compare.ts). Each
 * query draws from a random source seeded with its position, identically on both sides, so a
 * replay is deterministic and unchanged services never count. Grouped by the client's country and
 * AS (from the configured geo databases; `unknown` without them) and by the service answering the
 * name. RUM data is not consulted (the `rum` step falls back as without coverage). Pure apart from
 * reading the geo databases.
 */
export function replayTraffic(queries: readonly LoggedQuery[], current: Snapshot, proposed: Snapshot, env: ReplayEnv, skipped = 0): ReplayReport {
  return runAtOnce(replaySteps(queries, current, proposed, env, skipped));
}

/**
 * {@link replayTraffic} as steps (a pause every 64 queries, and while each side's zone index is
 * built): the daemon runs it in slices on the DNS thread (runSliced; gitops/replay/hold.ts).
 */
export function* replaySteps(queries: readonly LoggedQuery[], current: Snapshot, proposed: Snapshot, env: ReplayEnv, skipped = 0): Generator<void, ReplayReport, void> {
  const before = yield* side(current, env);
  const after = yield* side(proposed, env);
  const groups = { country: new Map<string, ReplayGroup>(), asn: new Map<string, ReplayGroup>(), service: new Map<string, ReplayGroup>() };
  const count = (m: Map<string, ReplayGroup>, key: string, changed: boolean) => {
    let g = m.get(key);
    if (!g) m.set(key, (g = { key, queries: 0, changed: 0, percent: 0 }));
    g.queries++;
    if (changed) g.changed++;
  };
  const examples = new Map<string, ReplayExample>();
  const services = new Map<string, string>();
  let changed = 0;
  for (let i = 0; i < queries.length; i++) {
    const q = queries[i]!;
    if ((i & 63) === 63) yield;
    const packet = buildQueryPacket(q.name, QTYPES[q.type]!, q.ecs);
    const seed = (i + 1) * 2654435761;
    const a = before.ask(packet, q.src, seed);
    const b = after.ask(packet, q.src, seed);
    const differs = answersDiffer(a, b);
    if (differs) changed++;
    const client = q.ecs ? q.ecs.split('/')[0]! : q.src.replace(/^::ffff:(?=\d+\.)/, '');
    const name = toFqdn(q.name);
    let svc = services.get(name);
    if (svc === undefined) services.set(name, (svc = serviceLabel(current, proposed, name)));
    count(groups.country, countryOf(env.geo.city, client), differs);
    const asn = asnOfIp(env.geo.asn, client);
    count(groups.asn, asn ? `AS${asn.asn}${asn.org ? ` ${asn.org}` : ''}` : 'unknown', differs);
    count(groups.service, svc, differs);
    if (differs) {
      const ex = { name, type: q.type, client: q.ecs ?? client, before: describe(a), after: describe(b), count: 0 };
      const key = `${ex.name}\u0000${ex.type}\u0000${ex.client}\u0000${ex.before}\u0000${ex.after}`;
      (examples.get(key) ?? examples.set(key, ex).get(key)!).count++;
    }
  }
  const pct = (n: number, of: number) => (of === 0 ? 0 : Math.round((n / of) * 10000) / 100);
  const list = (m: Map<string, ReplayGroup>) => [...m.values()]
    .map((g) => ({ ...g, percent: pct(g.changed, g.queries) }))
    .sort((x, y) => y.changed - x.changed || y.queries - x.queries || x.key.localeCompare(y.key));
  return {
    queries: queries.length, skipped, changed, percent: pct(changed, queries.length),
    geo: { country: Boolean(env.geo.city?.reader), asn: Boolean(env.geo.asn?.reader) },
    byCountry: list(groups.country), byAsn: list(groups.asn), byService: list(groups.service),
    examples: [...examples.values()].sort((x, y) => y.count - x.count || x.name.localeCompare(y.name)).slice(0, 20),
  };
}
