import { createHash } from 'node:crypto';
import { encodeToken } from './names.js';
import { nextTurn } from '../../core/apply/slicer.js';

/**
 * Plans too large for one config-stream message (docs/cluster.md "Large plans"): the plan's bytes
 * go to an object in the JetStream object store `<kvBucket>_PLANS`, and the stream carries a small
 * reference message at the plan's place. This module is the pure part: when to carry a plan by
 * reference, the object's name, the reference message, and the checks of both.
 */

/** NATS servers' default `max_payload`, used when the server did not say. */
export const DEFAULT_MAX_PAYLOAD = 1024 * 1024;
/** Room left under `max_payload` for the message headers (message id, JetStream headers). */
export const HEADER_HEADROOM = 4 * 1024;
/** The largest plan carried by reference; a larger object is refused before it is read. */
export const MAX_PLAN_OBJECT_BYTES = 256 * 1024 * 1024;

/** Where a plan's bytes are, and what they must be. */
export interface PlanRef {
  /** object store bucket */
  bucket: string;
  /** object name */
  name: string;
  /** bytes of the plan message */
  size: number;
  /** SHA-256 of those bytes, lowercase hex */
  sha256: string;
}

/** The body of a reference message on the config stream. */
export interface RefMsg {
  ref: PlanRef;
  /** the publishing node */
  node: string;
  /** ms timestamp of the publish */
  at: number;
  /** the plan's revision (also the message id) */
  revision: string;
}

/**
 * The largest body published inline: the server's `max_payload` (`nc.info.max_payload`; 1 MiB
 * when unknown) less the headroom for headers, and at least 1 KiB.
 */
export function inlineLimit(maxPayload: number | undefined): number {
  const mp = typeof maxPayload === 'number' && maxPayload > 0 ? maxPayload : DEFAULT_MAX_PAYLOAD;
  return Math.max(1024, mp - HEADER_HEADROOM);
}

/** True when a body of `bytes` bytes goes through the object store rather than inline. */
export function carriedByRef(bytes: number, limit: number): boolean {
  return bytes > limit;
}

/** SHA-256 of bytes, lowercase hex. */
export function sha256Hex(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * A message's UTF-8 bytes and their SHA-256, from the texts it was written in: one text per turn of
 * the event loop (a large plan's outbox parts, so neither a join nor an encode or hash of the
 * whole runs in one turn). The same bytes as encoding the joined texts.
 */
export async function messageBytes(texts: readonly string[], pause: () => Promise<void> = nextTurn): Promise<{ bytes: Uint8Array; sha256: string }> {
  const enc = new TextEncoder();
  if (texts.length === 1) {
    const bytes = enc.encode(texts[0]);
    return { bytes, sha256: sha256Hex(bytes) };
  }
  let total = 0;
  for (const t of texts) total += Buffer.byteLength(t, 'utf8');
  const bytes = new Uint8Array(total);
  const hash = createHash('sha256');
  let off = 0;
  for (let i = 0; i < texts.length; i++) {
    if (i > 0) await pause();
    const n = enc.encodeInto(texts[i]!, bytes.subarray(off)).written;
    hash.update(bytes.subarray(off, off + n));
    off += n;
  }
  return { bytes, sha256: hash.digest('hex') };
}

/**
 * The object name of a plan: `<cluster>.<revision>.<sha256>` (tokens escaped like subject
 * tokens). The digest makes the name content-addressed: a re-publish puts the same bytes under
 * the same name, and a later plan that reuses a revision never replaces the bytes an earlier
 * reference names.
 */
export function planObjectName(clusterToken: string, revision: string, sha256: string): string {
  return `${clusterToken}.${encodeToken(revision)}.${sha256}`;
}

const BUCKET_RE = /^[-\w]+$/;
const SHA_RE = /^[0-9a-f]{64}$/;

/** True for a body that claims to be a reference message (has a `ref` field); parse it with `parseRefMsg`. */
export function isRefShaped(body: unknown): boolean {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && 'ref' in body;
}

/**
 * Shape check of a reference message: undefined when it is malformed (bucket not a valid bucket
 * name, empty object name, size not a positive integer, digest not 64 hex digits, no node, time
 * or revision). A malformed reference names no plan, so every node skips it alike.
 */
export function parseRefMsg(body: unknown): RefMsg | undefined {
  if (!isRefShaped(body)) return undefined;
  const b = body as Partial<RefMsg>;
  const r = b.ref as Partial<PlanRef> | undefined | null;
  if (typeof r !== 'object' || r === null) return undefined;
  if (typeof r.bucket !== 'string' || !BUCKET_RE.test(r.bucket)) return undefined;
  if (typeof r.name !== 'string' || r.name === '') return undefined;
  if (typeof r.size !== 'number' || !Number.isSafeInteger(r.size) || r.size <= 0) return undefined;
  if (typeof r.sha256 !== 'string' || !SHA_RE.test(r.sha256)) return undefined;
  if (typeof b.node !== 'string' || typeof b.at !== 'number' || !Number.isFinite(b.at) || typeof b.revision !== 'string' || b.revision === '') return undefined;
  return { ref: { bucket: r.bucket, name: r.name, size: r.size, sha256: r.sha256 }, node: b.node, at: b.at, revision: b.revision };
}

/** Why an object of `size` bytes (as the store reports it) cannot be the referenced plan, or undefined. */
export function checkObjectSize(ref: PlanRef, size: number): string | undefined {
  if (size > MAX_PLAN_OBJECT_BYTES) return `plan object ${ref.name} is ${size} bytes, more than the ${MAX_PLAN_OBJECT_BYTES} allowed`;
  if (size !== ref.size) return `plan object ${ref.name} is ${size} bytes, the reference says ${ref.size}`;
  return undefined;
}

/** Why fetched bytes are not the referenced plan (size or digest differ), or undefined when they are. */
export function checkPlanBytes(ref: PlanRef, data: Uint8Array): string | undefined {
  const bad = checkObjectSize(ref, data.byteLength);
  if (bad) return bad;
  const got = sha256Hex(data);
  return got === ref.sha256 ? undefined : `plan object ${ref.name} has SHA-256 ${got}, the reference says ${ref.sha256}`;
}
