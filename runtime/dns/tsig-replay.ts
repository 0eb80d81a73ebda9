import { DEFAULT_FUDGE } from './tsig.js';

/**
 * The replay check of signed UPDATE messages (RFC 8945 §5.2.3): per key, the newest Time Signed
 * accepted and the MACs seen within the fudge window. A MAC seen before, or a Time Signed older
 * than the key's newest, is refused: a captured UPDATE cannot be sent again while its signature is
 * still fresh. Memory is bounded by the window: MACs older than twice the fudge are forgotten
 * (their messages fail the time check anyway). Queries do not use it: answering one twice changes
 * nothing.
 */
export class ReplayGuard {
  private readonly keys = new Map<string, { newest: number; macs: Map<string, number> }>();

  constructor(private readonly windowS = 2 * DEFAULT_FUDGE) {}

  /** True when the signature is new; records it. `now` in seconds. */
  accept(key: string, timeSigned: number, mac: Buffer, now: number): boolean {
    let k = this.keys.get(key);
    if (!k) this.keys.set(key, (k = { newest: 0, macs: new Map() }));
    for (const [m, t] of k.macs) if (t < now - this.windowS) k.macs.delete(m);
    const id = mac.toString('base64');
    if (k.macs.has(id) || timeSigned < k.newest) return false;
    k.macs.set(id, timeSigned);
    k.newest = timeSigned;
    return true;
  }
}
