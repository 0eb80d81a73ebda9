import type { Algorithm, AllUnhealthyPolicy, AsnRule, ChainStep, HealthCheckFields } from './types.js';

/**
 * Turns validated request or manifest fields into row fields with the spec's defaults
 * (gslb-api.md §2). Pure; shared by the REST API and the GitOps loader so both mean the same.
 */
type Input = Record<string, unknown>;
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/** Member fields on create: weight ≤ 0 → 1, priority 0, enabled true. */
export function memberCreateFields(b: Input) {
  const w = num(b.weight);
  return {
    ipAddress: String(b.ipAddress),
    port: Number(b.port),
    weight: w === undefined || w <= 0 ? 1 : w,
    priority: num(b.priority) ?? 0,
    enabled: typeof b.enabled === 'boolean' ? b.enabled : true,
    rumUrl: typeof b.rumUrl === 'string' && b.rumUrl !== '' ? b.rumUrl : null,
  };
}

/** Member fields on update: only sent fields change; a negative weight becomes 0. */
export function memberUpdateFields<T extends object>(current: T, b: Input): T {
  const next: Input = { ...(current as Input) };
  if (b.ipAddress !== undefined) next.ipAddress = b.ipAddress;
  if (b.port !== undefined) next.port = b.port;
  if (b.weight !== undefined) next.weight = Math.max(0, Number(b.weight));
  if (b.priority !== undefined) next.priority = b.priority;
  if (b.enabled !== undefined) next.enabled = b.enabled;
  if (b.rumUrl !== undefined) next.rumUrl = typeof b.rumUrl === 'string' && b.rumUrl !== '' ? b.rumUrl : null;
  return next as T;
}

export const HEALTHCHECK_DEFAULTS: HealthCheckFields = {
  type: 'tcp', port: 80, intervalMs: 10000, timeoutMs: 2000, httpPath: '/', httpHost: '', httpExpectedStatus: 200,
  httpContains: '', tls: false, insecureSkipVerify: false, scoreWindow: 0, icmpCount: 3, scriptPath: '', scriptContent: '',
  webhookURL: '', webhookMethod: 'POST', rise: 1, fall: 1,
};

/**
 * Health check fields: every field optional, and fields sent as zero values get the defaults
 * ("Fields sent as zero values get the defaults"). `httpExpectedStatus: 0` is the exception the
 * spec defines: it means "ignore the status" and is kept.
 */
export function healthCheckFields(b: Input): HealthCheckFields {
  const out: HealthCheckFields = { ...HEALTHCHECK_DEFAULTS };
  for (const [k, def] of Object.entries(HEALTHCHECK_DEFAULTS)) {
    const v = b[k];
    if (v === undefined || v === null) continue;
    // the request schema has checked each field's type
    Object.assign(out, { [k]: k !== 'httpExpectedStatus' && (v === 0 || v === '' || v === false) ? def : v });
  }
  return out;
}

const ALGORITHMS = new Set(['round-robin', 'weighted-round-robin', 'geo-ip', 'map-file', 'asn', 'failover']);

/** Canonical algorithm name (aliases mapped), or undefined when unknown. */
export function canonicalAlgorithm(name: unknown): Algorithm | undefined {
  if (name === undefined || name === null || name === '') return 'round-robin';
  const n = normaliseAlgorithmName(String(name));
  return ALGORITHMS.has(n) ? (n as Algorithm) : undefined;
}

/** Service fields with defaults: algorithm round-robin, ttl 60, no chain, all-unhealthy → all. */
export function serviceFields(b: Input) {
  const ttl = num(b.ttl);
  const chain = Array.isArray(b.chain) ? (b.chain as string[]).map((s) => (s === 'rum-latency' ? 'rum' : s) as ChainStep) : [];
  return {
    name: String(b.name),
    domain: String(b.domain),
    algorithm: canonicalAlgorithm(b.algorithm) ?? 'round-robin',
    ttl: ttl === undefined || ttl <= 0 ? 60 : ttl,
    poolId: typeof b.poolId === 'string' && b.poolId !== '' ? b.poolId : null,
    chain,
    whenAllUnhealthy: (typeof b.whenAllUnhealthy === 'string' ? b.whenAllUnhealthy : 'all') as AllUnhealthyPolicy,
    asnRules: Array.isArray(b.asnRules) ? (b.asnRules as AsnRule[]).map((r) => ({ ...r })) : [],
  };
}

/** Geo rule fields: priority defaults to 0. */
export function geoRuleFields(b: Input) {
  return { cidr: String(b.cidr), endpoint: String(b.endpoint), priority: num(b.priority) ?? 0 };
}

/** Maps algorithm aliases (`wrr`, `weighted_rr`, `geoip`, `mapfile`) to their canonical names. */
export function normaliseAlgorithmName(name: string): string {
  switch (name) {
    case 'wrr': case 'weighted_rr': return 'weighted-round-robin';
    case 'geoip': return 'geo-ip';
    case 'mapfile': return 'map-file';
    default: return name;
  }
}
