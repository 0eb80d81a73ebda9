import { createHash } from 'node:crypto';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { Db } from '../../runtime/store/db.js';
import type { Change, Plan } from '../../core/plan/types.js';
import type { Row } from '../../core/model/types.js';
import type { ConfigMsg } from '../../runtime/cluster/config-sync.js';

/** A pool row as a REST write makes it. */
const pool = (id: string, name: string, revision: string): Row => ({ kind: 'pool', id, name, origin: 'api', revision, tenantId: 'default' } as unknown as Row);

/**
 * Plan `i` of a REST-shaped history: in every ten, eight create a pool, one renames the pool made
 * eight plans before, one deletes the pool made seven plans before. `prefix` names the pools.
 */
export function historyPlan(i: number, prefix = 'bulk'): Plan {
  const revision = `api:${prefix}-${i}`;
  const j = i % 10;
  let change: Change;
  if (j < 8) {
    const after = pool(`${prefix}-${i}`, `${prefix}-pool-${i}`, revision);
    change = { op: 'create', kind: 'pool', id: after.id, label: `pool "${String((after as unknown as { name: string }).name)}"`, after, fields: [] };
  } else if (j === 8) {
    const id = `${prefix}-${i - 8}`;
    const before = pool(id, `${prefix}-pool-${i - 8}`, `api:${prefix}-${i - 8}`);
    const after = pool(id, `${prefix}-renamed-${i}`, revision);
    change = { op: 'update', kind: 'pool', id, label: `pool "${prefix}-renamed-${i}"`, before, after, fields: [{ field: 'name', before: `${prefix}-pool-${i - 8}`, after: `${prefix}-renamed-${i}` }] };
  } else {
    const id = `${prefix}-${i - 8}`;
    const before = pool(id, `${prefix}-pool-${i - 8}`, `api:${prefix}-${i - 8}`);
    change = { op: 'delete', kind: 'pool', id, label: `pool "${prefix}-pool-${i - 8}"`, before, fields: [] };
  }
  const counts = { create: 0, update: 0, delete: 0 };
  counts[change.op]++;
  return {
    revision, origin: 'api', baseVersion: 0, changes: [change], counts,
    safety: { safe: true, existing: 0, updates: counts.update, deletes: counts.delete, maxChangePercent: 100, minExisting: 0 },
  };
}

/**
 * Publishes plans `from` … `to - 1` of the history on `subject` as another node's REST writes
 * would be (message id = revision), up to 256 acknowledgements outstanding. Returns the last
 * sequence.
 */
export async function publishHistory(js: JetStreamClient, subject: string, from: number, to: number, prefix = 'bulk'): Promise<number> {
  const enc = new TextEncoder();
  let last = 0;
  const inflight = new Set<Promise<void>>();
  for (let i = from; i < to; i++) {
    const plan = historyPlan(i, prefix);
    const msg: ConfigMsg = { plan, node: 'elsewhere', at: Date.now() };
    const p: Promise<void> = js.publish(subject, enc.encode(JSON.stringify(msg)), { msgID: plan.revision, timeout: 30_000 })
      .then((ack) => { last = Math.max(last, ack.seq); }).finally(() => inflight.delete(p));
    inflight.add(p);
    if (inflight.size >= 256) await Promise.race(inflight);
  }
  await Promise.all(inflight);
  return last;
}

/** The rows of a node's database (kind, id and the stored JSON) as a count and one SHA-256. */
export function rowsDigest(db: Db): { rows: number; sha256: string } {
  const h = createHash('sha256');
  let rows = 0;
  for (const r of db.prepare('SELECT kind, id, data FROM resources ORDER BY kind, id').raw().iterate() as Iterable<[string, string, string]>) {
    h.update(`${r[0]}\t${r[1]}\t${r[2]}\n`);
    rows++;
  }
  return { rows, sha256: h.digest('hex') };
}
