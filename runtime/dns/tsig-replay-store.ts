import { createHash } from 'node:crypto';
import type { Db } from '../store/db.js';
import { DEFAULT_FUDGE } from './tsig.js';

/**
 * Where the MACs of accepted signed UPDATEs are kept beyond one process (docs/dns.md "TSIG",
 * docs/cluster.md "Replay caches"), so a captured UPDATE cannot be sent again after a restart or
 * to another node while its signature still verifies.
 */
export interface ReplayStore {
  /**
   * Records the MAC `mac` of key `key` until `expiresAt` (seconds, when its signature stops
   * verifying). Resolves true when it was new, false when it was recorded before (a replay).
   * Rejects when it cannot tell (the cluster is unreachable): the caller refuses to guess.
   */
  claim(key: string, mac: Buffer, expiresAt: number, now: number): Promise<boolean>;
}

/**
 * The longest a recorded MAC must be kept: UPDATE accepts a signature only within `DEFAULT_FUDGE`
 * of this server's clock (update-handler.ts), so one recorded at any moment of its window can
 * verify for at most twice that long afterwards.
 */
export const REPLAY_WINDOW_S = 2 * DEFAULT_FUDGE;

/** KV bucket of the cluster's replay cache (docs/cluster.md "Names"). */
export const REPLAY_BUCKET = 'SVC_TSIG_REPLAY';

const macId = (mac: Buffer) => createHash('sha256').update(mac).digest('hex');

/**
 * The replay cache of a node without a cluster: table `dns_tsig_replay` (migration 0017), one row
 * per accepted MAC (its SHA-256) until the signature expires. Rows past their expiry are deleted
 * at each claim. A claim is one small synchronous transaction on the main thread, like any write.
 */
export class SqliteReplayStore implements ReplayStore {
  private readonly sweep;
  private readonly insert;

  constructor(db: Db) {
    this.sweep = db.prepare('DELETE FROM dns_tsig_replay WHERE expires_at < ?');
    this.insert = db.prepare('INSERT OR IGNORE INTO dns_tsig_replay (key, mac_sha256, expires_at) VALUES (?, ?, ?)');
  }

  claim(key: string, mac: Buffer, expiresAt: number, now: number): Promise<boolean> {
    try {
      this.sweep.run(now);
      return Promise.resolve(this.insert.run(key, macId(mac), expiresAt).changes === 1);
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }
}

/** A cluster-wide first-claim-wins (core.ports.clusterClaim, gitops/canary/kv-claim.ts). */
export type Claim = (bucket: string, ttlMs: number, tokens: readonly string[]) => Promise<boolean>;

/**
 * The replay cache of a cluster: KV `SVC_TSIG_REPLAY`, key `<cluster>.<key name>.<SHA-256 of the
 * MAC>`, created with `kv.create` so that of every node seeing one MAC exactly one succeeds; the
 * bucket's TTL (`REPLAY_WINDOW_S`) expires the entries. Shared by every node and kept by
 * JetStream across their restarts. While the bus is unreachable a claim rejects.
 */
export class ClusterReplayStore implements ReplayStore {
  constructor(private readonly claimKey: Claim) {}

  claim(key: string, mac: Buffer): Promise<boolean> {
    return this.claimKey(REPLAY_BUCKET, REPLAY_WINDOW_S * 1000, [key, macId(mac)]);
  }
}
