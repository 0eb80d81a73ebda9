import { DEFAULT_FUDGE } from './tsig.js';

/**
 * The in-process layer of the replay check of signed UPDATE messages (RFC 8945 §5.2.3): per key,
 * the newest Time Signed accepted and the MACs accepted within the fudge window. A MAC seen before,
 * or a Time Signed older than the key's newest, is refused: a captured UPDATE cannot be sent again
 * while its signature is still fresh. The ReplayStore (tsig-replay-store.ts) holds the MACs
 * beyond this process (SQLite, or the cluster's KV); this layer answers a repeat without asking it
 * and adds the ordering rule, which is per node and forgotten at a restart. Memory is bounded by
 * the window: MACs older than twice the fudge are forgotten (their messages fail the time check
 * anyway). Queries do not use it: answering one twice changes nothing.
 */
export class ReplayGuard {
  private readonly keys = new Map<string, { newest: number; macs: Map<string, number> }>();

  constructor(private readonly windowS = 2 * DEFAULT_FUDGE) {}

  /** True when the signature is neither a MAC accepted before nor older than the key's newest. `now` in seconds. */
  fresh(key: string, timeSigned: number, mac: Buffer, now: number): boolean {
    const k = this.keys.get(key);
    if (!k) return true;
    for (const [m, t] of k.macs) if (t < now - this.windowS) k.macs.delete(m);
    return !k.macs.has(mac.toString('base64')) && timeSigned >= k.newest;
  }

  /** Records an accepted signature: its MAC, and its Time Signed as the key's newest when it is. */
  accepted(key: string, timeSigned: number, mac: Buffer): void {
    let k = this.keys.get(key);
    if (!k) this.keys.set(key, (k = { newest: 0, macs: new Map() }));
    k.macs.set(mac.toString('base64'), timeSigned);
    k.newest = Math.max(k.newest, timeSigned);
  }
}
