import { createHash } from 'node:crypto';
import type { ApplyHook } from '../../core/apply/hooks.js';
import { freedOf, type UniqueKey } from '../../core/plan/unique.js';
import type { Reservation, ReserveResult, UniqueNames } from '../ports/unique-names.js';
import { alreadyExists } from './kv-claim.js';
import type { ClusterMetrics } from './metrics.js';
import { encodeToken, type ClusterNames } from './names.js';
import type { NatsLink } from './nats-link.js';

/** The KV bucket of unique-name reservations (docs/cluster.md "Unique names"); no TTL: a reservation lasts as long as its row. */
export const UNIQUE_BUCKET = 'SVC_UNIQUE';

/** A KV call that has not answered after this long counts as "cannot tell" (the write goes on with the local check). */
const CALL_MS = 5_000;

/** The key of a name: `<cluster>.<kind>.<scope>.<SHA-256 hex of the normalised name>` (scope '' is `=`). */
export function reservationKey(names: ClusterNames, key: UniqueKey): string {
  const digest = createHash('sha256').update(key.name, 'utf8').digest('hex');
  return [names.clusterToken, encodeToken(key.kind), encodeToken(key.scope), digest].join('.');
}

function parse(bytes: Uint8Array | undefined): Reservation | undefined {
  if (!bytes) return undefined;
  try {
    const v = JSON.parse(new TextDecoder().decode(bytes)) as Partial<Reservation>;
    if (typeof v.id !== 'string' || typeof v.at !== 'number') return undefined;
    return { id: v.id, tenantId: String(v.tenantId ?? ''), rowName: String(v.rowName ?? ''), node: String(v.node ?? ''), at: v.at };
  } catch {
    return undefined;
  }
}

function within<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('kv call timed out')), CALL_MS); timer.unref(); });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * Reservations in KV `SVC_UNIQUE`: `reserve` creates the key (JetStream compares the key's last
 * sequence, so of two nodes creating one key at once exactly one wins); when it exists, reads the
 * holder, and takes a stale one over by updating at the revision read (again one winner).
 * Malformed values count as stale. Each call is counted in `gslbd_state_kv_operations_total`
 * (`op` = `reserve`, `takeover`, `release`).
 */
export function kvUniqueNames(link: NatsLink, names: ClusterNames, metrics: ClusterMetrics): UniqueNames {
  const count = (op: string, result: string) => metrics.kvOps.inc({ bucket: UNIQUE_BUCKET, op, result });
  const bucket = () => link.bucket(UNIQUE_BUCKET);
  const enc = (v: Reservation) => JSON.stringify(v);
  return {
    async reserve(key, value, stale): Promise<ReserveResult> {
      if (!link.up) return undefined;
      const k = reservationKey(names, key);
      const mine: Reservation = { ...value, node: names.node };
      try {
        const kv = await within(bucket());
        try {
          await within(kv.create(k, enc(mine)));
          count('reserve', 'ok');
          return { ok: true };
        } catch (err) {
          if (!alreadyExists(err)) throw err;
        }
        const entry = await within(kv.get(k));
        const holder = parse(entry?.value);
        if (entry && entry.operation === 'PUT' && holder && !stale(holder)) {
          count('reserve', 'exists');
          return { ok: false, holder };
        }
        // stale, malformed, or deleted meanwhile: take it over at the revision read (one winner)
        try {
          if (entry && entry.operation === 'PUT') await within(kv.update(k, enc(mine), entry.revision));
          else await within(kv.create(k, enc(mine)));
          count('takeover', 'ok');
          return { ok: true };
        } catch (err) {
          if (!alreadyExists(err)) throw err;
          count('takeover', 'lost');
          const now = parse((await within(kv.get(k)))?.value);
          return now ? { ok: false, holder: now } : undefined;
        }
      } catch {
        count('reserve', 'error');
        return undefined;
      }
    },
    async release(key, id) {
      if (!link.up) return;
      const k = reservationKey(names, key);
      try {
        const kv = await within(bucket());
        const entry = await within(kv.get(k));
        if (!entry || entry.operation !== 'PUT' || parse(entry.value)?.id !== id) return;
        await within(kv.delete(k, { previousSeq: entry.revision }));
        count('release', 'ok');
      } catch {
        // another node reserved it meanwhile, or KV is away: a leaked reservation is taken over once stale
        count('release', 'error');
      }
    },
  };
}

/**
 * Releases the names a plan applied on this node gives up (deleted rows, old names of renamed
 * rows), after its swap. Plans from the config stream are left to the node that made them; a
 * release that never happens (that node died) leaves a reservation whose row is gone, taken over
 * once stale.
 */
export function releaseHook(unique: UniqueNames): ApplyHook {
  return {
    afterSwap(plan, _next, _prev, opts) {
      if (opts.fromStream) return;
      for (const c of freedOf(plan)) void unique.release(c.key, c.row.id);
    },
  };
}
