/**
 * Types shared by the balancing algorithms and filter-chain steps (gslb-api.md §2 "Routing
 * algorithms", "Filter-chain steps"). Every step is a pure function over an ordered candidate list
 * plus query facts; randomness and rotation come in through `SelectContext`.
 */

/** One answerable endpoint, built at snapshot-swap or health-change time and never mutated. */
export interface Candidate {
  readonly ip: string;
  readonly family: 4 | 6;
  /** position in storage (registration) order */
  readonly order: number;
  /** balancer weight; 0 disables (a disabled member has weight 0) */
  readonly weight: number;
  /** failover priority; 0 = unset, sorts last */
  readonly priority: number;
  readonly rumUrl: string | null;
  /** health score in [0,1]; 1 when unknown */
  readonly score: number;
  /** node-to-member probe round-trip time in ms; -1 when unknown */
  readonly rttMs: number;
  /**
   * the lowest probe RTT any live node of the cluster measured (this node's without a cluster;
   * docs/cluster.md "Probe RTT"), for the `rum` fallback; -1 when unknown; absent: `rttMs`
   */
  readonly clusterRttMs?: number;
  /** endpoint location in degrees; NaN when unknown */
  readonly lat: number;
  readonly lon: number;
  /** precomputed record data: 4 bytes (A) or 16 bytes (AAAA) */
  readonly rdata: Buffer;
}

/** A random source returning numbers in [0, 1). Injected so tests are deterministic. */
export type Rng = () => number;

/** A client location in degrees. */
export interface GeoPoint { lat: number; lon: number }

/** AS facts about a client address. */
export interface AsnInfo { asn: number; org: string }

/** One recorded chain step, for POST /simulate. */
export interface StepTrace { step: string; input: string[]; output: string[]; reason: string }

/**
 * Real-user-measurement data. `lowest` returns the candidate with the lowest fresh latency measured
 * from the client's subnet among those with a rumUrl, or undefined when there is no coverage.
 * No RUM store exists yet; the RUM part plugs one in.
 */
export interface RumSource {
  lowest(clientIp: string, cands: readonly Candidate[]): { ip: string; latencyMs: number } | undefined;
  /**
   * When the source records samples, it tells this listener of each one (subnet key, member
   * address, latency ms, time): the DNS part sets it to copy samples to its worker threads.
   */
  onSample?: ((key: string, ip: string, ms: number, at: number) => void) | undefined;
}

/** The RUM source used until one is plugged in: never any coverage. */
export const NO_RUM: RumSource = { lowest: () => undefined };

/** Facts a selection may need about the query. */
export interface SelectContext {
  /** client address: the ECS subnet address when present, else the query source */
  client: string;
  /** query sequence number: drives round-robin rotation */
  seq: number;
  rand: Rng;
  /** client location, undefined when unknown or no City database */
  locate: (ip: string) => GeoPoint | undefined;
  /** client AS, undefined when unknown or no ASN database */
  asnOf: (ip: string) => AsnInfo | undefined;
  rum: RumSource;
  /** when set, every step appends what it did */
  trace?: StepTrace[] | undefined;
}

/** Result of one step: the new order and why. */
export interface StepResult { out: readonly Candidate[]; reason: string }
