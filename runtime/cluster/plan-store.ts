import type { NatsLink } from './nats-link.js';
import { checkObjectSize, checkPlanBytes, MAX_PLAN_OBJECT_BYTES, type PlanRef } from './plan-ref.js';

/**
 * The object store side of plans carried by reference (docs/cluster.md "Large plans"): putting a
 * plan's bytes before its reference is published, and fetching and checking them before the plan
 * is applied.
 */

/** The object store's digest string of a SHA-256 hex digest (`SHA-256=` and padded base64url). */
function storeDigest(sha256: string): string {
  return `SHA-256=${Buffer.from(sha256, 'hex').toString('base64').replace(/\+/g, '-').replace(/\//g, '_')}`;
}

/**
 * Puts `data` as object `ref.name` in `ref.bucket` (created when absent), in chunks of at most
 * `chunkBytes`, each chunk's publish bounded by `timeoutMs`. An object already there with the same
 * size and digest (a put before a crash, or an earlier attempt) is kept. Resolves once the
 * object is complete in the store; throws what the store throws, or when the store reports
 * another size.
 */
export async function putPlanObject(link: NatsLink, ref: PlanRef, data: Uint8Array, chunkBytes: number, timeoutMs: number): Promise<'put' | 'present'> {
  const os = await link.objectStore(ref.bucket);
  const have = await os.info(ref.name);
  if (have && !have.deleted && have.size === data.byteLength && have.digest === storeDigest(ref.sha256)) return 'present';
  const info = await os.putBlob({ name: ref.name, options: { max_chunk_size: chunkBytes } }, data, { timeout: timeoutMs });
  if (info.size !== data.byteLength) throw new Error(`plan object ${ref.name}: the store holds ${info.size} bytes of ${data.byteLength}`);
  return 'put';
}

/**
 * Fetches the plan a reference names, within `timeoutMs`. Refuses, before reading the data, an
 * object that is missing, deleted, of another size than the reference says, or larger than
 * `MAX_PLAN_OBJECT_BYTES`; refuses data whose size or SHA-256 differ from the reference (the
 * store checks its own digest too). Throws an Error that says why; never returns partial data.
 */
export async function fetchPlanObject(link: NatsLink, ref: PlanRef, timeoutMs: number): Promise<Uint8Array> {
  let cancel: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => { cancel?.(); reject(new Error(`plan object ${ref.name}: not fetched within ${timeoutMs} ms`)); }, timeoutMs);
  });
  const fetchIt = async (): Promise<Uint8Array> => {
    if (ref.size > MAX_PLAN_OBJECT_BYTES) throw new Error(checkObjectSize(ref, ref.size));
    const os = await link.objectStore(ref.bucket);
    const info = await os.info(ref.name);
    if (!info || info.deleted) throw new Error(`plan object ${ref.name} not found in object store ${ref.bucket}`);
    const bad = checkObjectSize(ref, info.size);
    if (bad) throw new Error(bad);
    const r = await os.get(ref.name);
    if (!r) throw new Error(`plan object ${ref.name} not found in object store ${ref.bucket}`);
    // observed at once: the store rejects it when its reading fails, also after this gave up
    const failed = r.error.then((e) => e, (e: unknown) => e as Error);
    const reader = r.data.getReader();
    cancel = () => void reader.cancel().catch(() => undefined);
    const out = new Uint8Array(ref.size);
    let n = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (n + value.byteLength > ref.size) { cancel(); throw new Error(`plan object ${ref.name} holds more than the ${ref.size} bytes the reference says`); }
      out.set(value, n);
      n += value.byteLength;
    }
    const err = await failed;
    if (err) throw err;
    const data = out.subarray(0, n);
    const wrong = checkPlanBytes(ref, data);
    if (wrong) throw new Error(wrong);
    return data;
  };
  try {
    return await Promise.race([fetchIt(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
