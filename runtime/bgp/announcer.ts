import type { Core } from '../app.js';
import { desiredPrefixes, evaluatePools, type PoolPrefixes, type PoolVerdict } from './announce.js';

/** Where the announcer sends the result: the speaker in the daemon, a recorder in tests. */
export interface AnnounceSink { announce(prefixes: readonly string[]): void }

/**
 * Re-evaluates what to announce (announce.ts) from the current snapshot and health view and hands
 * the result to the speaker, which sends UPDATEs only for what changed. `schedule` coalesces the
 * triggers of one event-loop turn (a plan apply flipping many members) into one evaluation. Logs
 * once per change of a pool's verdict: a warning for a pool that does not exist, info otherwise.
 */
export class Announcer {
  private verdicts: PoolVerdict[] = [];
  private readonly lastReason = new Map<number, string>();
  private pending = false;
  private healthVersion = -1;
  private snapshotVersion = -1;

  constructor(
    private readonly core: Pick<Core, 'holder' | 'health' | 'log'>,
    private readonly nodePrefixes: readonly string[],
    private readonly entries: readonly PoolPrefixes[],
    private readonly sink: AnnounceSink,
  ) {}

  /** Evaluates on the next turn of the event loop; several calls in one turn evaluate once. */
  schedule(): void {
    if (this.pending) return;
    this.pending = true;
    setImmediate(() => { this.pending = false; this.evaluate(); });
  }

  /**
   * Evaluates when the health view or the snapshot moved since the last evaluation: under a
   * cluster health policy a peer's report can change a verdict without a local flip.
   */
  evaluateIfChanged(): void {
    if (this.core.health.version !== this.healthVersion || this.core.holder.current.version !== this.snapshotVersion) this.evaluate();
  }

  /** Evaluates now and announces the result. */
  evaluate(): void {
    const snap = this.core.holder.current;
    this.healthVersion = this.core.health.version;
    this.snapshotVersion = snap.version;
    this.verdicts = evaluatePools(this.entries, snap, (poolId, ip) => this.core.health.isHealthy(poolId, ip));
    this.verdicts.forEach((v, i) => {
      const key = `${v.reason}/${v.announce}`;
      if (this.lastReason.get(i) === key) return;
      this.lastReason.set(i, key);
      const fields = { poolID: v.poolID, poolId: v.poolId, prefixes: v.prefixes, reason: v.reason, healthy: v.healthyMembers, enabled: v.enabledMembers };
      if (v.reason === 'PoolNotFound' || v.reason === 'PoolNameAmbiguous') this.core.log.warn(fields, 'bgp pool prefixes withdrawn: no such pool');
      else this.core.log.info(fields, v.announce ? 'bgp pool prefixes announced' : 'bgp pool prefixes withdrawn');
    });
    this.sink.announce(desiredPrefixes(this.nodePrefixes, this.verdicts));
  }

  /** The verdicts of the last evaluation (GET /api/v1/bgp). */
  pools(): readonly PoolVerdict[] {
    return this.verdicts;
  }
}
