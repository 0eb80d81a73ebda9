import type { Config } from '../config/types.js';
import type { HealthView } from '../ports/health-view.js';
import type { ZoneIndex } from './zone-index.js';
import type { IndexImage } from './index-image.js';
import type { HealthBoardBuffers } from './health-board.js';

/**
 * The messages between the main thread and the DNS worker threads (docs/dns.md "Workers"). The
 * workers answer from shared memory the main thread writes: the index image (index-image.ts, the
 * zone index as shards of shared buffers, told by generation) and the health board
 * (health-board.ts). Only RUM samples are copied to each worker.
 */

/** `workerData` of a DNS worker. */
export interface WorkerInit {
  /** 1…: the worker's number (0 is the main thread) in logs and `gslbd_dns_worker_queries_total` */
  index: number;
  config: Config;
  /** the round-robin query counter shared by every answering thread (AnswerDeps.sequence) */
  sequence: SharedArrayBuffer;
  /** UDP port of the SO_REUSEPORT group to join */
  port: number;
  /** the index image as it is now (every shard) */
  image: IndexImage;
  /** the CHAOS `dns.versionName` TXT data: the provenance of the served revision */
  version: Buffer;
  /** the shared health board the worker's answers read verdicts from */
  board: HealthBoardBuffers;
  /** the cells the worker's DnsMetrics counts into (metrics.ts), read by the main thread at scrape time */
  metrics: SharedArrayBuffer;
}

/**
 * One endpoint's health as the main thread decides it, under the active policy (cluster policies
 * included): pool id, address, healthy, score, RTT ms, last checked (ms; 0 = never), and the
 * cluster-wide RTT ms the `rum` fallback orders by (HealthView.rttMs; -1 = none; left out: this
 * node's RTT). What the main thread writes to the health board.
 */
export type HealthRow = [poolId: string, ip: string, healthy: boolean, score: number, rttMs: number, lastChecked: number, clusterRttMs?: number];

/** A RUM sample: subnet key, member address, latency ms, time. */
export type RumSample = [key: string, ip: string, ms: number, at: number];

/** Main thread → worker. */
export type ToWorker =
  /** an applied change of the index image: take it, then acknowledge `gen` */
  | { t: 'image'; gen: number; image: IndexImage }
  /**
   * A large apply's image, sent before its commit (docs/dns.md "Workers"): kept aside until
   * `commit` names its stage (then taken and acknowledged as `gen`); an `image` or a newer `stage`
   * drops it.
   */
  | { t: 'stage'; stage: number; image: IndexImage }
  | { t: 'commit'; stage: number; gen: number }
  | { t: 'version'; version: Buffer }
  /** the whole image again, after a `resync`: acknowledged as `gen` */
  | { t: 'reset'; gen: number; image: IndexImage }
  /** the health board moved (HealthBoardWriter.onNewBoard): read this one from now on */
  | { t: 'board'; board: HealthBoardBuffers }
  | { t: 'rum'; samples: RumSample[] }
  | { t: 'reply'; id: number; reply: Uint8Array | null }
  | { t: 'stop' };

/** Log lines a worker hands to the main thread's logger: level, fields, message. */
export type LogLine = [level: 'debug' | 'info' | 'warn' | 'error', fields: Record<string, unknown>, msg: string];

/** Worker → main thread. */
export type FromWorker =
  | { t: 'ready'; port: number }
  | { t: 'failed'; message: string; code: string | undefined }
  | { t: 'ack'; gen: number }
  /** the worker could not take image `gen` (or was told to commit a stage it does not have): it asks for the whole image */
  | { t: 'resync'; gen: number }
  | { t: 'log'; lines: LogLine[] }
  | { t: 'forward'; id: number; req: Uint8Array; src: string };

/** One endpoint's verdict; undefined when it has no entry and the policy accepts it (the optimistic start). */
function verdictRow(pool: string, ip: string, health: HealthView): HealthRow | undefined {
  const e = health.get(pool, ip);
  const ok = health.isHealthy(pool, ip);
  const rtt = health.rttMs(pool, ip);
  if (!e && ok && rtt < 0) return undefined;
  return [pool, ip, ok, e?.score ?? 1, e?.rttMs ?? 0, e?.lastChecked ?? 0, rtt];
}

/**
 * The health verdicts the workers need: every endpoint of every served plan that has an entry or
 * that the active policy rejects (an endpoint with neither is healthy in the worker too, the
 * optimistic start). O(endpoints); the main thread runs it at most once per event-loop turn.
 */
export function healthTable(ix: ZoneIndex, health: HealthView): HealthRow[] {
  const out: HealthRow[] = [];
  const seen = new Set<string>();
  // the services of one pool answer from the same members: each pool is visited once
  const pools = new Set<string>();
  const plans = [...ix.services.values()].map((s) => s.plan);
  if (ix.staticPlan) plans.push(ix.staticPlan);
  for (const p of plans) {
    const pool = p.poolId ?? '';
    if (pools.has(pool)) continue;
    pools.add(pool);
    for (const m of p.members) {
      const key = `${pool}\u0000${m.ip}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const row = verdictRow(pool, m.ip, health);
      if (row) out.push(row);
    }
  }
  return out;
}

/**
 * The verdicts of the endpoints named in `changed` (HealthView.takeChanges), for a board that
 * already holds the earlier ones: a row for each endpoint with an entry or that the policy
 * rejects, and in `cleared` the ones with neither (healthy by the optimistic start: the board
 * clears its entry). O(changed endpoints).
 */
export function healthDelta(changed: readonly [string, string][], health: HealthView): { rows: HealthRow[]; cleared: [string, string][] } {
  const rows: HealthRow[] = [];
  const cleared: [string, string][] = [];
  for (const [pool, ip] of changed) {
    const row = verdictRow(pool, ip, health);
    if (row) rows.push(row);
    else cleared.push([pool, ip]);
  }
  return { rows, cleared };
}
