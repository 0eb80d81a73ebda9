import type { Config } from '../config/types.js';
import type { IndexImage } from './index-image.js';
import type { HealthBoardBuffers } from './health-board.js';

// the health rows the main thread writes to the board (health-rows.ts), re-exported for the workers' side
export { healthDelta, healthTable, type HealthRow } from './health-rows.js';

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
