/**
 * TypeScript shapes of the request bodies in schemas/resources.v1.schema.json (`$defs` of the same
 * name), for the route generics of runtime/resources/routes. The schema validates; these only type
 * what it let through, so each mirrors its definition field by field (the OpenAPI client test
 * checks that both agree).
 */

/** Fields a client may echo back from a read; accepted and ignored. */
type ReadOnlyEcho = { id?: unknown; origin?: unknown; revision?: unknown; source?: unknown };

/** `PoolBody`: POST /pools and PUT /pools/{id}. */
export type PoolBody = { name: string } & ReadOnlyEcho;

type MemberFields = {
  ipAddress: string;
  port: number;
  weight?: number;
  priority?: number;
  enabled?: boolean;
  rumUrl?: string | null;
  poolId?: string;
};

/** `MemberCreate`: POST /pools/{id}/members. */
export type MemberCreate = MemberFields & ReadOnlyEcho;

/** `MemberUpdate`: PUT /members/{id}; only the fields sent change. */
export type MemberUpdate = Partial<MemberFields> & ReadOnlyEcho;

/** Algorithm names a service body accepts (aliases included; stored canonical). */
export type AlgorithmName = 'round-robin' | 'weighted-round-robin' | 'wrr' | 'weighted_rr' | 'geo-ip' | 'geoip' | 'map-file' | 'mapfile' | 'asn' | 'failover';

/** `AsnRule`: one rule of the asn algorithm (an AS number or an organisation, and the endpoint). */
export type AsnRuleBody = { asn?: number; org?: string; endpoint: string };

/** `ServiceBody`: POST /services and PUT /services/{id}. */
export type ServiceBody = {
  name: string;
  domain: string;
  algorithm?: AlgorithmName;
  ttl?: number;
  poolId?: string | null;
  chain?: ('geo-ip' | 'latency' | 'rum' | 'rum-latency')[];
  whenAllUnhealthy?: 'all' | 'nodata' | 'servfail';
  asnRules?: AsnRuleBody[];
} & ReadOnlyEcho;

/** `HealthCheckBody`: PUT /pools/{id}/healthcheck; every field optional, zero values take the defaults. */
export type HealthCheckBody = {
  type?: 'tcp' | 'http' | 'icmp' | 'script' | 'webhook';
  port?: number;
  intervalMs?: number;
  timeoutMs?: number;
  httpPath?: string;
  httpHost?: string;
  httpExpectedStatus?: number;
  httpContains?: string;
  tls?: boolean;
  insecureSkipVerify?: boolean;
  scoreWindow?: number;
  icmpCount?: number;
  scriptPath?: string;
  scriptContent?: string;
  webhookURL?: string;
  webhookMethod?: 'POST' | 'GET' | '';
  rise?: number;
  fall?: number;
  poolId?: string;
} & ReadOnlyEcho;

/** `GeoRuleBody`: POST /pools/{id}/georules. */
export type GeoRuleBody = { cidr: string; endpoint: string; priority?: number; poolId?: string } & ReadOnlyEcho;
