import { badRequest, conflict, notFound } from '../../errors.js';
import type { EventBus } from '../../../core/events/bus.js';
import type { FormRow } from '../forms/rows.js';
import type { Page } from '../public/list.js';
import { SUBMISSION_SORTS, type SubmissionQuery, type SubmissionSort, type SubmissionStore } from './store.js';
import type { StoredFile, SubmissionFields, SubmissionRecord } from './types.js';

/** The submission list's query as it arrives (strings), page and limit already parsed. */
export interface SubmissionFilters { sort?: string; order?: string; getSpam?: string; claimed?: string; since?: string; until?: string }

/** The actions a submission would run now (../intake/service.ts `actionsFor`). */
export type ActionPicker = (form: FormRow, fields: SubmissionFields) => string[];

/**
 * A cluster's claims and replays (docs/forms.md "In a cluster"): a claim is decided cluster-wide
 * (409 naming who claimed it when another node's claim came first), a replay queued on every node.
 */
export interface SharedSubmissions {
  /** Claims the submission for `by` at `at` on every node; throws 409 when another claim came first. */
  claim(form: FormRow, s: SubmissionRecord, by: string, at: number): Promise<void>;
  /** Queues the jobs on every node; resolves with how many deliveries. */
  replay(form: FormRow, jobs: { submissionId: number; actionIds: string[] }[], at: number): Promise<number>;
}

/** The most submissions one replay may name (forms-api.md §8). */
export const REPLAY_MAX = 100;

/** A time filter: ISO 8601 (a date, or a date and time), else 400 naming the parameter. */
function timeOf(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const t = /^\d{4}-\d{2}-\d{2}/.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(t)) throw badRequest(`${name}: must be an ISO 8601 date or time (2026-11-24 or 2026-11-24T10:00:00Z)`);
  return t;
}

/** The store's query from the API's: defaults created_at, desc, spam left out. Pure. */
export function submissionQuery(page: Page, f: SubmissionFilters): SubmissionQuery {
  const sort = (f.sort ?? SUBMISSION_SORTS[0]) as SubmissionSort;
  if (!SUBMISSION_SORTS.includes(sort)) throw badRequest(`sort: must be one of ${SUBMISSION_SORTS.join(', ')}`);
  const order = f.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw badRequest('order: must be one of desc, asc');
  const spam = f.getSpam !== undefined && f.getSpam !== 'false' && f.getSpam !== '0';
  const claimed = f.claimed === undefined ? undefined : f.claimed === 'true';
  const since = timeOf('since', f.since);
  const until = timeOf('until', f.until);
  return { ...page, sort, order, spam, ...(claimed === undefined ? {} : { claimed }), ...(since === undefined ? {} : { since }), ...(until === undefined ? {} : { until }) };
}

/**
 * A form's submissions over /public/v1 (docs/forms.md "Submissions"): the list, claim (marks it
 * picked up once, names who, stops its reminders and emits `submission.claimed`), replay (queues
 * the form's current actions again for up to 100 submissions) and stored files.
 */
export class SubmissionService {
  constructor(
    private readonly store: SubmissionStore,
    private readonly pickActions: ActionPicker,
    private readonly bus: EventBus,
    private readonly now: () => number = Date.now,
  ) {}

  /** set in a cluster */
  shared: SharedSubmissions | undefined;

  list(form: FormRow, q: SubmissionQuery): { rows: SubmissionRecord[]; total: number } {
    return this.store.list(form.id, q);
  }

  /** The form's submission, or 404. */
  require(form: FormRow, id: number): SubmissionRecord {
    const s = this.store.get(form.id, id);
    if (!s) throw notFound(`submission ${id} not found in form ${form.id}`);
    return s;
  }

  /** Claims a submission for `by`; 409 when someone claimed it already (on any node, in a cluster). */
  async claim(form: FormRow, id: number, by: string): Promise<SubmissionRecord> {
    const s = this.require(form, id);
    if (s.claimedAt !== null) throw conflict(`submission ${id} was claimed by ${s.claimedBy} at ${new Date(s.claimedAt).toISOString()}`);
    const at = this.now();
    if (this.shared) {
      await this.shared.claim(form, s, by, at);
      return { ...s, claimedAt: at, claimedBy: by };
    }
    if (!this.store.claim(form.id, id, by, at)) throw conflict(`submission ${id} was claimed meanwhile`);
    this.bus.emit('form_event', {
      tenantId: form.tenantId, formId: form.id, type: 'submission.claimed',
      payload: { form_id: form.id, submission_id: id, by, claimed_at: new Date(at).toISOString() },
    });
    return { ...s, claimedAt: at, claimedBy: by };
  }

  /**
   * Queues the form's enabled actions again (those whose conditions each submission meets) for
   * the listed submissions, spam included when named; every id must be the form's (404 naming
   * the others), and nothing is queued unless all are.
   */
  async replay(form: FormRow, ids: readonly number[]): Promise<{ submissions: number; queued: number }> {
    if (ids.length > REPLAY_MAX) throw badRequest(`submission_ids: at most ${REPLAY_MAX}`);
    const found = this.store.existing(form.id, ids);
    const missing = ids.filter((i) => !found.has(i));
    if (missing.length > 0) throw notFound(`submissions not found in form ${form.id}: ${missing.join(', ')}`);
    const jobs = ids.map((i) => ({ submissionId: i, actionIds: this.pickActions(form, this.store.get(form.id, i)!.fields) }));
    if (this.shared) return { submissions: ids.length, queued: await this.shared.replay(form, jobs, this.now()) };
    return { submissions: ids.length, queued: this.store.queue(form.id, jobs, this.now()) };
  }

  /** A stored file of a submission by its index, or 404. */
  file(form: FormRow, id: number, index: number): StoredFile {
    const f = this.require(form, id).files[index];
    if (!f) throw notFound(`submission ${id} has no file ${index}`);
    return f;
  }
}
