import type { Config } from '../config/types.js';
import type { Ports } from '../ports/parts.js';
import type { Db } from '../store/db.js';
import type { Logger } from '../log/logger.js';
import { toFqdn } from '../tenancy/names.js';
import type { DeferredWork, UpdateSigner } from './step.js';
import { ReplayGuard } from './tsig-replay.js';
import { ClusterReplayStore, SqliteReplayStore, type ReplayStore } from './tsig-replay-store.js';
import { DEFAULT_FUDGE } from './tsig.js';
import { parseUpdate, type UpdateRr } from './update-message.js';
import { RCODE } from './wire-reply.js';

/** A grant of `dns.update.grants`: what a TSIG key may change. */
export type UpdateGrant = { key: string; tenant: string; suffixes: readonly string[] };

/**
 * Carries out a parsed UPDATE that passed the replay check (the TXT feature's, runtime/txt):
 * `grant` is the signing key's (undefined when unsigned or not granted), `isZone` tells a served
 * zone. Returns the rcode, and for the log why it was refused and which names changed.
 */
export type UpdateApply = (grant: UpdateGrant | undefined, isZone: (name: string) => boolean, msg: { zone: string; prereqs: readonly UpdateRr[]; updates: readonly UpdateRr[] }) => { rcode: number; reason?: string; names?: string[] };

/** Why a signed UPDATE is refused before it is looked at, or undefined when it may go on. */
type ReplayVerdict = { rcode: number; reason: string } | undefined;

/**
 * RFC 2136 UPDATE (docs/dns.md "Dynamic updates"), for the step a feature adds to the answer chain
 * (the TXT feature's, runtime/txt/dns-step.ts), which defers the reply to it: the grant of the key that
 * signed the message decides the tenant; a signature seen before (in this process, in the
 * database, or on any node of the cluster), or older than the key's last accepted one on this
 * node, is a replay and refused (RFC 8945 §5.2.3); every message is logged with its outcome.
 * The replay store is the cluster's KV when `state.nats.servers` is set, else SQLite
 * (tsig-replay-store.ts); while the cluster cannot be asked, signed UPDATEs get SERVFAIL. `apply`
 * carries out a message that passed; `isZone` tells a served zone.
 */
export function createUpdateHandler(core: { config: Config; db: Db; ports: Ports }, isZone: (name: string) => boolean, log: Logger, apply: UpdateApply): DeferredWork {
  const grants = new Map(core.config.dns.update.grants.map((g) => [toFqdn(g.key), g]));
  const guard = new ReplayGuard();
  const sqlite = new SqliteReplayStore(core.db);
  const clustered = core.config.state.nats.servers.length > 0;
  // the cluster part (set up before this one) provides the claim when the cluster is configured
  const store = (): ReplayStore | undefined => {
    if (!clustered) return sqlite;
    const claim = core.ports.clusterClaim;
    return claim ? new ClusterReplayStore(claim) : undefined;
  };

  async function checkReplay(signed: UpdateSigner, zone: string): Promise<ReplayVerdict> {
    const now = Math.floor(Date.now() / 1000);
    // A signature may stay valid for Fudge seconds either side of Time Signed; the stores keep a
    // MAC for at most twice DEFAULT_FUDGE, so a longer fudge could outlive its record.
    if (signed.fudge > DEFAULT_FUDGE) return { rcode: RCODE.REFUSED, reason: `a TSIG fudge above ${DEFAULT_FUDGE} s` };
    if (!guard.fresh(signed.key, signed.timeSigned, signed.mac, now)) return { rcode: RCODE.REFUSED, reason: 'a replayed or older signature' };
    const s = store();
    try {
      if (!s) throw new Error('the cluster part is not set up');
      // the store decides (atomically, across restarts and nodes); only then is the signature
      // this node's newest, so a refused replay moves nothing
      if (!(await s.claim(signed.key, signed.mac, signed.timeSigned + signed.fudge, now))) return { rcode: RCODE.REFUSED, reason: 'a replayed signature (seen before a restart or by another node)' };
    } catch (err) {
      log.warn({ err, key: signed.key, zone }, 'dns update refused: the replay cache cannot be asked');
      return { rcode: RCODE.SERVFAIL, reason: 'the replay cache cannot be asked' };
    }
    guard.accepted(signed.key, signed.timeSigned, signed.mac);
    return undefined;
  }

  return async (req, signed) => {
    const msg = parseUpdate(req);
    if (!msg.ok) return msg.rcode;
    const key = signed?.key;
    if (signed) {
      const refused = await checkReplay(signed, msg.zone);
      if (refused) {
        log.warn({ key, zone: msg.zone, reason: refused.reason }, 'dns update refused by the replay check');
        return refused.rcode;
      }
    }
    try {
      const out = apply(key === undefined ? undefined : grants.get(toFqdn(key)), isZone, msg);
      log.info({ key, zone: msg.zone, rcode: out.rcode, ...(out.reason ? { reason: out.reason } : {}), ...(out.names ? { names: out.names } : {}) }, 'dns update');
      return out.rcode;
    } catch (err) {
      log.error({ err, key, zone: msg.zone }, 'dns update failed');
      return RCODE.SERVFAIL;
    }
  };
}
