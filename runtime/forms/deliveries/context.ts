import type { SubmissionFields } from '../submissions/types.js';

/** The event a delivery carries (docs/forms.md "Events"). */
export type DeliveryEvent = 'submission.created' | 'submission.claimed' | 'submission.reminder' | 'action.test';

/** What every action type renders from: the form, the submission and the delivery. */
export interface DeliveryContext {
  /** the delivery's id, stable across attempts (`webhook-id`; receivers dedupe on it); `test_<n>` for a test run */
  deliveryId: string;
  event: DeliveryEvent;
  form: { id: string; name: string };
  submission: {
    id: number | null;
    created_at: string;
    data: SubmissionFields;
    files: { index: number; field: string; name: string; type: string; size: number }[];
    claimed_by?: string | null;
  };
  /** seconds since the epoch of this attempt */
  timestamp: number;
}

/** A field's value as one line of text: lists joined with ", ". */
export function fieldText(v: string | string[]): string {
  return Array.isArray(v) ? v.join(', ') : v;
}

/** The fields as [name, text] pairs, in the order received. */
export function fieldPairs(data: SubmissionFields): [string, string][] {
  return Object.entries(data).map(([k, v]) => [k, fieldText(v)]);
}

/** Cuts a text to `max` characters, marking the cut. */
export function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}
