import { randomUUID } from 'node:crypto';
import type { FormActionRow, FormRow } from '../forms/rows.js';
import { jsonFields } from '../intake/fields.js';
import type { DeliveryContext } from './context.js';
import type { AttemptRow, DeliveryRow, DeliveryState, Outbox } from './outbox.js';
import type { SendOutcome } from './sender.js';
import { htmlToText, templateVars, type TemplateRenderer } from './templates.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** One attempt as the API shows it (`api-forms` `DeliveryAttempt`). */
export function attemptView(a: AttemptRow) {
  return { number: a.n, at: new Date(a.started_at).toISOString(), outcome: a.outcome, status: a.status, error: a.error, duration_ms: a.duration_ms };
}

/** A delivery as the API shows it (`api-forms` `Delivery`), with its attempts oldest first. */
export function deliveryView(r: DeliveryRow, attempts: readonly AttemptRow[]) {
  return {
    id: r.id, submission_id: r.submission_id, event: r.event, state: r.state, attempts: r.attempts,
    next_at: r.state === 'pending' || r.state === 'retrying' ? iso(r.next_at) : null,
    last_status: r.last_status, last_error: r.last_error, created_at: new Date(r.created_at).toISOString(), sent_at: iso(r.sent_at),
    attempt_history: attempts.map(attemptView),
  };
}

/**
 * The action operations over the queue (docs/forms.md "Deliveries"): retry re-queues the failed
 * deliveries, test performs the action once on sample data and stores nothing, the delivery log,
 * and the template preview.
 */
export class DeliveryService {
  constructor(
    private readonly outbox: Outbox,
    /** one run of the test endpoint (ActionSender.test) */
    private readonly runTest: (action: FormActionRow, ctx: DeliveryContext) => Promise<SendOutcome>,
    private readonly kick: () => void,
    private readonly render: TemplateRenderer,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * In a cluster: opens the action's failed deliveries (their cluster keys) for every node before
   * they are queued again here, and has every node queue its own again (docs/forms.md "In a cluster").
   */
  shared: { retry(actionId: string, keys: readonly string[], at: number): Promise<void> } | undefined;

  /** Puts the action's failed deliveries back in the queue (every node's, in a cluster); returns how many. */
  async retry(action: FormActionRow): Promise<number> {
    if (this.shared) await this.shared.retry(action.id, this.outbox.failedKeys(action.id), this.now());
    const n = this.outbox.requeueFailed(action.id, this.now());
    if (n > 0) this.kick();
    return n;
  }

  /** Runs the action once on `data` as a submission of `form` (a test: nothing is stored or queued). */
  async test(action: FormActionRow, form: FormRow, data: unknown): Promise<SendOutcome> {
    const now = this.now();
    return this.runTest(action, {
      deliveryId: `test_${randomUUID()}`, event: 'action.test', form: { id: form.id, name: form.name },
      submission: { id: null, created_at: new Date(now).toISOString(), data: jsonFields(data, 200), files: [] },
      timestamp: Math.floor(now / 1000),
    });
  }

  log(action: FormActionRow, page: number, limit: number, state?: DeliveryState) {
    const { rows, total } = this.outbox.log(action.id, page, limit, state);
    const attempts = this.outbox.attemptsOf(rows.map((r) => r.id));
    return { data: rows.map((r) => deliveryView(r, attempts.get(r.id) ?? [])), page, limit, total };
  }

  /**
   * Renders a template of `tenant` against mock data in the render pool (HTML escaped unless
   * `| raw`); a template error or a limit is a 400 naming it, no room in the pool a 429.
   */
  async preview(tenant: string, body: string, subject: string | undefined, mock: Record<string, unknown>, form: FormRow | undefined) {
    const vars = templateVars({ id: form?.id ?? '', name: form?.name ?? '' }, mock as never, null, new Date(this.now()).toISOString());
    const html = await this.render.html(tenant, body, vars);
    return { html, text: htmlToText(html), subject: subject === undefined ? null : await this.render.subject(tenant, subject, vars) };
  }
}
