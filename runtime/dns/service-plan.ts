import { isIP } from 'node:net';
import type { AsnResponse, CityResponse } from 'maxmind';
import type { Config } from '../config/types.js';
import { normaliseAlgorithmName } from '../../core/model/normalize.js';
import { STATIC_POOL_ID, type HealthEntry } from '../ports/health-view.js';
import type { Algorithm, GeoRuleRow, MemberRow, ServiceRow } from '../../core/model/types.js';
import { childrenOf, type Snapshot } from '../../core/snapshot/snapshot.js';
import { prepareAsnRules } from '../balancer/asn.js';
import { prepareMapRules } from '../balancer/map-file.js';
import type { SelectSpec } from '../balancer/select.js';
import type { Candidate } from '../balancer/types.js';
import { locateIp } from '../geo/lookup.js';
import type { MmdbSource } from '../geo/mmdb-source.js';
import { ipv4ToInt, ipv6ToBigInt } from '../net/ip.js';


/** An answerable endpoint before health is applied. */
export interface MemberBase {
  ip: string; family: 4 | 6; order: number; weight: number; priority: number; rumUrl: string | null;
  lat: number; lon: number; rdata: Buffer;
}

/** Candidates of one address family: enabled ones and those DNS may answer with. */
export interface FamilyState { enabled: Candidate[]; healthy: Candidate[] }

/**
 * Everything the answer path needs about one service, computed at snapshot-swap time. The health
 * part (`v4`, `v6`) is rebuilt lazily when the health view's version changes.
 */
export interface ServicePlan extends SelectSpec {
  id: string;
  name: string;
  domain: string;
  poolId: string | null;
  ttl: number;
  /** shared by the services of one pool (PoolParts): read only */
  members: readonly MemberBase[];
  healthVersion: number;
  /** when (performance.now) reads of the shared board began to be interrupted; -1: they are not */
  healthWaitSince: number;
  v4: FamilyState;
  v6: FamilyState;
}

/** Geo databases and manual locations used while building plans. */
export interface GeoDeps {
  city: MmdbSource<CityResponse> | undefined;
  asn: MmdbSource<AsnResponse> | undefined;
  endpointLocations: Record<string, { lat: number; lon: number }>;
}

/** Record data of an address: 4 bytes for IPv4, 16 for IPv6. */
export function addressRdata(ip: string): Buffer {
  if (isIP(ip) === 4) {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(ipv4ToInt(ip));
    return b;
  }
  const n = ipv6ToBigInt(ip);
  const b = Buffer.alloc(16);
  b.writeBigUInt64BE(n >> 64n, 0);
  b.writeBigUInt64BE(n & 0xffffffffffffffffn, 8);
  return b;
}

function memberBase(ip: string, order: number, weight: number, priority: number, rumUrl: string | null, geo: GeoDeps): MemberBase | undefined {
  const fam = isIP(ip);
  if (fam === 0) return undefined;
  // Manual endpointLocations win over the database: the operator stated them on purpose.
  const manual = geo.endpointLocations[ip];
  const loc = manual ?? locateIp(geo.city, ip);
  return { ip, family: fam as 4 | 6, order, weight, priority, rumUrl, lat: loc?.lat ?? NaN, lon: loc?.lon ?? NaN, rdata: addressRdata(ip) };
}

const EMPTY_STATE: FamilyState = { enabled: [], healthy: [] };

function emptyPlanParts() {
  return { healthVersion: -1, healthWaitSince: -1, v4: EMPTY_STATE, v6: EMPTY_STATE };
}

/**
 * What a service plan takes from its pool: the answerable members and the prepared map-file
 * rules. Services of one pool share it (read only: never mutate it).
 */
export interface PoolParts { members: readonly MemberBase[]; mapRules: ReturnType<typeof prepareMapRules> }

/** The pool part of a service without a pool: no members. */
export const NO_POOL_PARTS: PoolParts = { members: [], mapRules: [] };

/**
 * The pool part of the plans of a pool's services: its enabled members with weight above 0, in
 * storage order, and its geo rules as map-file rules. Pure apart from the geo lookups.
 */
export function poolParts(s: Snapshot, poolId: string | null, geo: GeoDeps): PoolParts {
  if (!poolId) return NO_POOL_PARTS;
  return poolPartsOf(childrenOf<MemberRow>(s, poolId, 'member'), childrenOf<GeoRuleRow>(s, poolId, 'georule'), geo);
}

/** `poolParts` from a pool's members (storage order) and geo rules, wherever they come from (a DNS worker reads them from the index image). */
export function poolPartsOf(rows: readonly Pick<MemberRow, 'ipAddress' | 'enabled' | 'weight' | 'priority' | 'rumUrl'>[], rules: readonly Pick<GeoRuleRow, 'cidr' | 'endpoint'>[], geo: GeoDeps): PoolParts {
  const members: MemberBase[] = [];
  rows.forEach((m, i) => {
    if (!m.enabled || m.weight <= 0) return;
    const b = memberBase(m.ipAddress, i, m.weight, m.priority, m.rumUrl, geo);
    if (b) members.push(b);
  });
  return { members, mapRules: prepareMapRules(rules) };
}

/**
 * Builds the plan of an API or git service. Candidates are the pool's enabled members with
 * weight above 0, in storage order; map-file rules are the pool's geo rules. `pool` is
 * `poolParts` of the service's pool when the caller has it already (the services of a pool share it).
 */
export function planService(s: Snapshot, svc: ServiceRow, geo: GeoDeps, pool: PoolParts = poolParts(s, svc.poolId, geo)): ServicePlan {
  return servicePlanOf(svc, pool);
}

/** The plan of a service from its fields and its pool's part (`planService` without the snapshot). */
export function servicePlanOf(svc: Pick<ServiceRow, 'id' | 'name' | 'domain' | 'poolId' | 'ttl' | 'algorithm' | 'chain' | 'whenAllUnhealthy' | 'asnRules'>, pool: PoolParts): ServicePlan {
  return {
    id: svc.id, name: svc.name, domain: svc.domain.toLowerCase(), poolId: svc.poolId, ttl: svc.ttl,
    algorithm: svc.algorithm, chain: svc.chain ?? [], whenAllUnhealthy: svc.whenAllUnhealthy ?? 'all',
    mapRules: pool.mapRules, asnRules: prepareAsnRules(svc.asnRules ?? []), members: pool.members, ...emptyPlanParts(),
  };
}

/** Builds the plan of the static `loadbalancer.*` endpoints; undefined when none are configured. */
export function planStatic(cfg: Config, domain: string, geo: GeoDeps): ServicePlan | undefined {
  const lb = cfg.loadbalancer;
  if (lb.endpoints.length === 0) return undefined;
  const members: MemberBase[] = [];
  lb.endpoints.forEach((ip, i) => {
    const w = lb.weights[ip] ?? 1;
    if (w <= 0) return; // 0 disables
    const b = memberBase(ip, i, w, 0, null, geo);
    if (b) members.push(b);
  });
  return {
    id: 'static', name: 'loadbalancer', domain, poolId: STATIC_POOL_ID, ttl: lb.ttl,
    algorithm: normaliseAlgorithmName(lb.algorithm) as Algorithm, chain: [], whenAllUnhealthy: 'all',
    mapRules: prepareMapRules(lb.mapFile.rules), asnRules: prepareAsnRules(lb.asn.rules), members, ...emptyPlanParts(),
  };
}

/**
 * What the answer path reads health from: the main thread's `HealthView`, or a DNS worker's view of
 * the shared health board (health-board.ts). `get`'s entry is read at once (the board reuses it).
 */
export interface AnswerHealth {
  /** changes with every change of a verdict; -1 while a change is being written (the board) */
  readonly version: number;
  get(poolId: string, ip: string): HealthEntry | undefined;
  isHealthy(poolId: string, ip: string): boolean;
  /**
   * the probe RTT the `rum` fallback orders by (HealthView.rttMs: the cluster-wide minimum in a
   * cluster); -1 when none. Called right after `get` for the same endpoint, with what it returned.
   */
  rttMs(poolId: string, ip: string, entry: HealthEntry | undefined): number;
}

/**
 * How long (ms) a plan keeps its state while every read of the shared board is interrupted by a
 * write, before one is taken as it is: a large pool is not held back for ever by a board written
 * every turn.
 */
export const HEALTH_READ_MAX_WAIT_MS = 50;

const clock = () => performance.now();

/**
 * Applies the current health view to a plan when its version changed: score, RTT and the healthy
 * subset per family. Called on the answer path; costs nothing while health is unchanged. On the
 * shared board (a DNS worker) a plan that has a state keeps it while a batch is being written or
 * when one was written while its members were read, so an answer does not mix two batches; it is
 * read again on the next query, and taken as read once it waited HEALTH_READ_MAX_WAIT_MS.
 */
export function refreshHealth(plan: ServicePlan, health: AnswerHealth, now: () => number = clock): void {
  const version = health.version;
  if (plan.healthVersion === version && version >= 0) return;
  const mayWait = plan.healthVersion >= 0 && (plan.healthWaitSince < 0 || now() - plan.healthWaitSince < HEALTH_READ_MAX_WAIT_MS);
  if (version < 0 && mayWait) { if (plan.healthWaitSince < 0) plan.healthWaitSince = now(); return; }
  const poolId = plan.poolId ?? '';
  const v4: FamilyState = { enabled: [], healthy: [] };
  const v6: FamilyState = { enabled: [], healthy: [] };
  for (const m of plan.members) {
    const e = health.get(poolId, m.ip);
    // One literal with every field in one order: all candidates share one hidden class, so the
    // answer path's property reads stay monomorphic (a spread of the member gave candidates of
    // many shapes once live health set scores and RTTs, and those reads went megamorphic).
    const c: Candidate = {
      ip: m.ip, family: m.family, order: m.order, weight: m.weight, priority: m.priority, rumUrl: m.rumUrl,
      score: e?.score ?? 1, rttMs: e && e.lastChecked > 0 ? e.rttMs : -1, clusterRttMs: health.rttMs(poolId, m.ip, e), lat: m.lat, lon: m.lon, rdata: m.rdata,
    };
    const st = m.family === 4 ? v4 : v6;
    st.enabled.push(c);
    if (health.isHealthy(poolId, m.ip)) st.healthy.push(c);
  }
  if (mayWait && health.version !== version) { if (plan.healthWaitSince < 0) plan.healthWaitSince = now(); return; }
  plan.v4 = v4;
  plan.v6 = v6;
  plan.healthVersion = version;
  plan.healthWaitSince = -1;
}
