/**
 * Resource rows: the unit the Plan creates, updates and deletes, the store persists and the
 * Snapshot indexes. Every row records who owns it (`origin`) and which revision last wrote it.
 * `config` rows are the daemon's config file's (the static pool, runtime/config/static-pool.ts):
 * they are built at start, read alongside the snapshot's rows, and never planned, stored or written.
 */
export type Origin = 'git' | 'api' | 'config';

export interface RowMeta {
  id: string;
  kind: string;
  origin: Origin;
  /** revision that last wrote the row: a commit SHA for git rows, `api:<id>` for REST writes */
  revision: string;
  /** for git rows: the manifest file that declares it; for config rows: the config file key */
  source?: string | undefined;
  /** for git rows: the natural key the planner matches on (`eu`, `eu/10.0.0.1:80`) */
  key?: string | undefined;
  tenantId: string;
}

export interface PoolRow extends RowMeta { kind: 'pool'; name: string }

export interface MemberRow extends RowMeta {
  kind: 'member';
  poolId: string;
  ipAddress: string;
  port: number;
  weight: number;
  priority: number;
  enabled: boolean;
  rumUrl: string | null;
}

export type HealthCheckType = 'tcp' | 'http' | 'icmp' | 'script' | 'webhook';

export interface HealthCheckFields {
  type: HealthCheckType;
  port: number;
  intervalMs: number;
  timeoutMs: number;
  httpPath: string;
  httpHost: string;
  httpExpectedStatus: number;
  httpContains: string;
  tls: boolean;
  insecureSkipVerify: boolean;
  scoreWindow: number;
  icmpCount: number;
  scriptPath: string;
  scriptContent: string;
  webhookURL: string;
  webhookMethod: 'POST' | 'GET';
  /** consecutive successes needed to turn healthy (default 1) */
  rise: number;
  /** consecutive failures needed to turn unhealthy (default 1) */
  fall: number;
}

export interface HealthCheckRow extends RowMeta, HealthCheckFields { kind: 'healthcheck'; poolId: string }

export interface GeoRuleRow extends RowMeta {
  kind: 'georule';
  poolId: string;
  cidr: string;
  endpoint: string;
  priority: number;
}

export type Algorithm = 'round-robin' | 'weighted-round-robin' | 'geo-ip' | 'map-file' | 'asn' | 'failover';
export type ChainStep = 'geo-ip' | 'latency' | 'rum';
/** What a service answers when every member is unhealthy. */
export type AllUnhealthyPolicy = 'all' | 'nodata' | 'servfail';

export interface AsnRule { asn?: number | undefined; org?: string | undefined; endpoint: string }

export interface ServiceRow extends RowMeta {
  kind: 'service';
  name: string;
  domain: string;
  algorithm: Algorithm;
  ttl: number;
  poolId: string | null;
  /** ordered filter-chain steps run after the algorithm (gslb-api.md "Filter-chain steps") */
  chain: ChainStep[];
  /** answer when every member is unhealthy: all enabled members (default), NODATA or SERVFAIL */
  whenAllUnhealthy: AllUnhealthyPolicy;
  /** rules for the asn algorithm */
  asnRules: AsnRule[];
}

export type Row = PoolRow | MemberRow | HealthCheckRow | GeoRuleRow | ServiceRow | GenericRow;

/** Rows of kinds added later (redirects, text records, alert targets, forms, API keys). */
export interface GenericRow extends RowMeta { [field: string]: unknown }

/** A row's field by name, for code that walks fields by name (diffs, references, labels). */
export function fieldOf(row: Row, name: string): unknown {
  return (row as GenericRow)[name];
}

/** Fields that describe ownership and identity, not content: never part of a field diff. */
export const META_FIELDS = new Set(['id', 'kind', 'origin', 'revision', 'source', 'key', 'tenantId']);

export const DEFAULT_TENANT = 'default';
