import type { Config } from './types.js';
import { parseDuration } from './duration.js';
import { HEALTHCHECK_DEFAULTS } from '../../core/model/normalize.js';
import { DEFAULT_TENANT, type HealthCheckFields, type HealthCheckRow, type MemberRow, type PoolRow, type RowMeta } from '../../core/model/types.js';

/**
 * Id of the pool the config file's endpoints (`loadbalancer.endpoints`) form: the pool id under
 * which the health view holds them (`isHealthy(STATIC_POOL_ID, ip)`) and the id of the read-only
 * pool the API and the dashboard show. Never the id of a stored row (those are UUIDs).
 */
export const STATIC_POOL_ID = 'static';

/** The config file key that declares the static pool and its members (their `source`). */
export const STATIC_SOURCE = 'loadbalancer.endpoints';

/** The static pool and its rows: built from the config file, never stored, never written over REST. */
export interface StaticPool {
  pool: PoolRow;
  members: readonly MemberRow[];
  /** the file's `health.*` block as the pool's check; undefined when `health.enabled` is false */
  healthCheck: HealthCheckRow | undefined;
}

/** Id of the static member at `ip` (`static:192.0.2.10`): stable while the address is configured. */
export function staticMemberId(ip: string): string {
  return `${STATIC_POOL_ID}:${ip}`;
}

/** The file's `health.*` block as check fields (gslb-config-auth.md §2; meanings of document 2). */
export function staticCheckFields(h: Config['health']): HealthCheckFields {
  return {
    type: h.type,
    port: h.port,
    intervalMs: parseDuration(h.checkinterval) || HEALTHCHECK_DEFAULTS.intervalMs,
    timeoutMs: parseDuration(h.timeout) || HEALTHCHECK_DEFAULTS.timeoutMs,
    httpPath: h.http.path || '/',
    httpHost: h.http.host,
    httpExpectedStatus: h.http.expectedstatus,
    httpContains: h.http.contains,
    tls: h.http.tls,
    insecureSkipVerify: h.http.insecureSkipVerify,
    scoreWindow: h.scoreWindow,
    icmpCount: h.icmpCount,
    scriptPath: h.scriptPath ?? '',
    scriptContent: h.scriptContent ?? '',
    webhookURL: h.webhookURL ?? '',
    webhookMethod: h.webhookMethod,
    rise: h.rise,
    fall: h.fall,
  };
}

/**
 * Builds the static pool of a config (docs/api.md "The static pool"): one member per distinct
 * endpoint, in file order, on the port its health check probes (`health.port`; DNS answers carry
 * addresses only), with its `loadbalancer.weights` weight (default 1; 0 leaves it out of answers,
 * so it shows as disabled). Rows have origin `config`, revision `config` and the system's tenant
 * (`default`, like the config repo's rows). Undefined when no endpoint is configured.
 */
export function buildStaticPool(config: Config): StaticPool | undefined {
  const lb = config.loadbalancer;
  if (lb.endpoints.length === 0) return undefined;
  const meta: Omit<RowMeta, 'id' | 'kind'> = { origin: 'config', revision: 'config', source: STATIC_SOURCE, tenantId: DEFAULT_TENANT };
  const pool: PoolRow = { kind: 'pool', id: STATIC_POOL_ID, name: STATIC_POOL_ID, ...meta };
  const members: MemberRow[] = [];
  const seen = new Set<string>();
  for (const ip of lb.endpoints) {
    if (seen.has(ip)) continue;
    seen.add(ip);
    const weight = lb.weights[ip] ?? 1;
    members.push({
      kind: 'member', id: staticMemberId(ip), poolId: STATIC_POOL_ID, ipAddress: ip, port: config.health.port,
      weight: Math.max(0, weight), priority: 0, enabled: weight > 0, rumUrl: null, ...meta,
    });
  }
  const healthCheck: HealthCheckRow | undefined = config.health.enabled
    ? { kind: 'healthcheck', id: STATIC_POOL_ID, poolId: STATIC_POOL_ID, ...staticCheckFields(config.health), ...meta, source: 'health' }
    : undefined;
  return { pool, members, healthCheck };
}

const built = new WeakMap<Config, StaticPool | null>();

/** {@link buildStaticPool}, built once per config (the daemon's config does not change while it runs). */
export function staticPoolOf(config: Config): StaticPool | undefined {
  let sp = built.get(config);
  if (sp === undefined) built.set(config, (sp = buildStaticPool(config) ?? null));
  return sp ?? undefined;
}
