import type { FormEvent } from '../../../core/events/bus.js';
import type { Outbox } from '../deliveries/outbox.js';
import type { SubmissionStore } from '../submissions/store.js';
import type { FormStreamEvent } from './events.js';

/** What applying the stream writes to. */
export interface ApplyTarget {
  store: SubmissionStore;
  outbox: Outbox;
  /** records a use of a form API key (its last-used time) */
  keyUsed: (keyId: string, at: number) => void;
  /** records a digest window the holder of the scheduled runs covered */
  digestCovered: (actionId: string, windowEnd: number, sentAt: number, submissions: number) => void;
  now: () => number;
}

/** What a batch left to do once committed: bus events of submissions and claims new on this node, and whether deliveries were queued or changed. */
export interface Applied { events: FormEvent[]; kick: boolean }

/**
 * Applies events of the form stream to this node's tables (inside the caller's transaction), in
 * order; each is idempotent (docs/forms.md "In a cluster"): a submission under its stream id (a
 * second time: nothing), a claim only on an unclaimed submission, deliveries under their cluster
 * keys, reminders marked once, a retry re-queuing the action's failed deliveries, another node's
 * delivery outcome recorded unless this node is sending that delivery, a key's use kept when later
 * than the one recorded, a digest window kept when later than the one recorded. The bus events of
 * submissions and claims this node did not have yet are returned, to be emitted after the commit.
 */
export function applyFormEvents(t: ApplyTarget, items: readonly { seq: number; e: FormStreamEvent }[]): Applied {
  const out: Applied = { events: [], kick: false };
  for (const { seq, e } of items) {
    // how many deliveries this message queued or re-queued (each evaluated, never short-circuited)
    let queued = 0;
    switch (e.t) {
      case 'submission':
        if (t.store.applyDurable(seq, e.s, e.actionIds)) {
          queued = e.actionIds.length;
          if (!e.s.spam) out.events.push({ tenantId: e.s.tenantId, formId: e.s.formId, type: 'submission.created', payload: { form_id: e.s.formId, submission_id: seq, created_at: new Date(e.s.createdAt).toISOString() } });
        }
        break;
      case 'claim':
        // only the claim that marked it queues its deliveries (a second claim message changes nothing)
        if (t.store.claim(e.formId, e.submissionId, e.by, e.at)) {
          out.events.push({ tenantId: e.tenantId, formId: e.formId, type: 'submission.claimed', payload: { form_id: e.formId, submission_id: e.submissionId, by: e.by, claimed_at: new Date(e.at).toISOString() } });
          queued = t.store.queueDurable(e.formId, seq, 'submission.claimed', [{ submissionId: e.submissionId, actionIds: e.actionIds }], e.at);
        }
        break;
      case 'replay':
        queued = t.store.queueDurable(e.formId, seq, 'submission.created', e.jobs, e.at);
        break;
      case 'reminder':
        t.store.markReminded(e.formId, e.jobs.map((j) => j.submissionId), e.at);
        queued = t.store.queueDurable(e.formId, seq, 'submission.reminder', e.jobs, e.at);
        break;
      case 'retry':
        queued = t.outbox.requeueFailed(e.actionId, e.at);
        break;
      case 'settled':
        t.outbox.mirror(e.key, e.d, t.now());
        break;
      case 'keyUsed':
        t.keyUsed(e.keyId, e.at);
        break;
      case 'digest':
        t.digestCovered(e.actionId, e.windowEnd, e.sentAt, e.submissions);
        break;
    }
    if (queued > 0) out.kick = true;
  }
  return out;
}
