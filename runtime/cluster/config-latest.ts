import type { ClusterMetrics } from './metrics.js';
import type { ClusterNames } from './names.js';
import { sleep, type NatsLink } from './nats-link.js';

/** Keeps `<cluster>.latest` in KV `state.config.kvBucket` at the highest acknowledged sequence. */
export interface LatestRecorder {
  /** Asks for `latest` to name this revision and sequence (ignored unless higher than asked before). */
  want(revision: string, seq: number): void;
  stop(): void;
}

/**
 * Writes `<cluster>.latest` with compare-and-set on the key's revision, so a slower node never
 * overwrites a newer entry with an older one. Reads again and retries a few times when someone
 * else wrote first; resolves without writing when the entry already names this sequence or a
 * later one. Errors: whatever KV throws after the retries.
 */
export async function recordLatest(link: NatsLink, names: ClusterNames, revision: string, seq: number): Promise<void> {
  const kv = await link.bucket(names.configBucket);
  const key = `${names.clusterToken}.latest`;
  const value = new TextEncoder().encode(JSON.stringify({ revision, seq, node: names.node, at: Date.now() }));
  for (let attempt = 0; attempt < 5; attempt++) {
    const cur = await kv.get(key);
    const curSeq = cur && cur.operation === 'PUT' ? (cur.json<{ seq: number }>().seq ?? 0) : 0;
    if (curSeq >= seq) return;
    try {
      if (cur) await kv.update(key, value, cur.revision); else await kv.create(key, value);
      return;
    } catch (err) {
      if (attempt === 4) throw err; // someone else wrote it first: read again, a few times
    }
  }
}

/**
 * The `latest` writer of one node: one write in flight; the highest wanted sequence wins; a
 * failing write is retried every second (e.g. during a KV leader election), for up to a minute.
 */
export function createLatestRecorder(deps: { link: NatsLink; names: ClusterNames; metrics: ClusterMetrics }): LatestRecorder {
  const { link, names, metrics } = deps;
  let wanted: { revision: string; seq: number } | undefined;
  let syncing: Promise<void> | undefined;
  let stopped = false;
  const sync = (): Promise<void> => (syncing ??= (async () => {
    for (let attempt = 0; attempt < 60 && wanted && !stopped; attempt++) {
      const want = wanted;
      try {
        await recordLatest(link, names, want.revision, want.seq);
        metrics.kvOps.inc({ bucket: names.configBucket, op: 'put', result: 'ok' });
        if (wanted === want) { wanted = undefined; return; }
      } catch {
        metrics.kvOps.inc({ bucket: names.configBucket, op: 'put', result: 'error' });
        await sleep(1_000);
      }
    }
  })().finally(() => { syncing = undefined; }));
  return {
    want(revision, seq) {
      if (seq > (wanted?.seq ?? 0)) wanted = { revision, seq };
      void sync();
    },
    stop() { stopped = true; },
  };
}
