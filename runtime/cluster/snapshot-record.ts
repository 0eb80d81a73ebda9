import type { ClusterNames } from './names.js';
import type { NatsLink } from './nats-link.js';
import { parseSnapshotRecord, snapshotKey, type SnapshotRecord } from './config-snapshot.js';

/**
 * The record of the newest config snapshot: key `<cluster>.snapshot` in KV `state.config.kvBucket`
 * (docs/cluster.md "Compaction").
 */

/** The newest snapshot's record, or undefined when there is none (or it is malformed). Errors: whatever KV throws. */
export async function readSnapshotRecord(link: NatsLink, names: ClusterNames): Promise<SnapshotRecord | undefined> {
  const kv = await link.bucket(names.configBucket);
  const e = await kv.get(snapshotKey(names.clusterToken));
  if (!e || e.operation !== 'PUT') return undefined;
  try { return parseSnapshotRecord(e.json()); } catch { return undefined; }
}

/**
 * Writes the record with compare-and-set on the key's revision, never backwards: false (nothing
 * written) when the key already names this sequence or a later one. Retries a few times when
 * another node wrote first. Errors: whatever KV throws after the retries.
 */
export async function writeSnapshotRecord(link: NatsLink, names: ClusterNames, rec: SnapshotRecord): Promise<boolean> {
  const kv = await link.bucket(names.configBucket);
  const key = snapshotKey(names.clusterToken);
  const value = new TextEncoder().encode(JSON.stringify(rec));
  for (let attempt = 0; ; attempt++) {
    const cur = await kv.get(key);
    const have = cur && cur.operation === 'PUT' ? (() => { try { return parseSnapshotRecord(cur.json()); } catch { return undefined; } })() : undefined;
    if (have && have.seq >= rec.seq) return false;
    try {
      if (cur) await kv.update(key, value, cur.revision); else await kv.create(key, value);
      return true;
    } catch (err) {
      if (attempt === 4) throw err;
    }
  }
}
