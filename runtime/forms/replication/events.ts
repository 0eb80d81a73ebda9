import type { SettledDelivery } from '../deliveries/outbox.js';
import type { NewSubmission } from '../submissions/store.js';

/** Deliveries of listed actions for listed submissions. */
export interface DeliveryJobs { submissionId: number; actionIds: string[] }

/**
 * A message of the form stream (docs/forms.md "In a cluster"). Every node applies every message,
 * in stream order, to its own tables; each is idempotent, so a message applied twice (at once by
 * the node that published it, then again from the stream) changes nothing the second time.
 * A submission takes its message's stream sequence as its id; a delivery a message queues is
 * keyed `<seq>.<submission>.<action>` on every node.
 */
export type FormStreamEvent =
  | { t: 'submission'; s: NewSubmission; actionIds: string[] }
  | { t: 'claim'; tenantId: string; formId: string; submissionId: number; by: string; at: number; actionIds: string[] }
  | { t: 'replay'; formId: string; jobs: DeliveryJobs[]; at: number }
  | { t: 'reminder'; formId: string; jobs: DeliveryJobs[]; at: number }
  | { t: 'retry'; actionId: string; at: number }
  | { t: 'settled'; key: string; d: SettledDelivery; node: string }
  | { t: 'keyUsed'; keyId: string; at: number }
  | { t: 'digest'; actionId: string; windowEnd: number; sentAt: number; submissions: number };

const TYPES = new Set(['submission', 'claim', 'replay', 'reminder', 'retry', 'settled', 'keyUsed', 'digest']);

/** The event a message holds, or undefined when it holds none this version knows (every node skips it alike). */
export function parseFormEvent(data: Uint8Array): FormStreamEvent | undefined {
  try {
    const v = JSON.parse(new TextDecoder().decode(data)) as { t?: unknown };
    return v && typeof v === 'object' && typeof v.t === 'string' && TYPES.has(v.t) ? v as FormStreamEvent : undefined;
  } catch {
    return undefined;
  }
}

/** A message's bytes. */
export function encodeFormEvent(e: FormStreamEvent): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(e));
}
