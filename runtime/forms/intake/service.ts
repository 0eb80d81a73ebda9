import type { Config } from '../../config/types.js';
import { forbidden, GslbError, notFound } from '../../errors.js';
import type { EventBus } from '../../../core/events/bus.js';
import { adapterOf } from '../actions/index.js';
import { conditionsMatch } from '../forms/conditions.js';
import { tierOf, type WorkspaceTier } from '../forms/tiers.js';
import type { FormActionRow, FormRow } from '../forms/rows.js';
import type { FileVault } from '../submissions/files.js';
import type { SubmissionStore } from '../submissions/store.js';
import type { StoredFile, SubmissionFields } from '../submissions/types.js';
import { valuesOf } from './fields.js';
import { originAllowed } from './origin.js';
import { schemaMismatches } from './schema-check.js';
import { emailsOf } from './spam/emails.js';
import { checkSpam, type SpamDeps, type SpamVerdict } from './spam/pipeline.js';
import { RECAPTCHA_FIELD } from './spam/recaptcha.js';

/** What the intake reads of the forms: a form by its public id (any workspace) and its actions. */
export interface IntakeForms {
  byId(id: string): FormRow | undefined;
  actionsOf(formId: string): readonly FormActionRow[];
}

/** What the intake needs. */
export interface IntakeDeps {
  forms: IntakeForms;
  submissions: SubmissionStore;
  vault: FileVault;
  spam: SpamDeps;
  config: () => Config['forms'];
  bus: EventBus;
  now?: () => number;
}

/** A parsed post, ready to be judged and stored. */
export interface IncomingSubmission {
  fields: SubmissionFields;
  /** files already written to the vault (removed again when the post is refused) */
  files: StoredFile[];
  ip: string;
  userAgent: string | null;
}

/** What happened to an accepted post: its id and whether it was stored as spam (never told to the visitor). */
export interface Accepted { id: number; spam: boolean; reason: string | null; queued: number }

const HOUR_MS = 3_600_000;

/** The schema-typed e-mail fields of a form (for the spam checks' address lookup). */
function emailFields(form: FormRow): string[] {
  return form.schema.fields.filter((f) => f.type.toLowerCase() === 'email').map((f) => f.name);
}

/**
 * The public submission path (docs/forms.md "Submitting"), without HTTP: the form and its gate
 * (submissions enabled, the posting page's origin), then for a parsed post, in order: the
 * enforced schema (422 naming each field), files against the tier (403), the spam pipeline, the
 * tier's monthly submissions (403; spam is stored but not counted), and one transaction storing the
 * submission with a delivery queued for every enabled action whose conditions it meets (none for
 * spam). A refused post leaves nothing behind: its files are removed.
 */
export class IntakeService {
  private readonly now: () => number;

  constructor(private readonly deps: IntakeDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** The form visitors post to, or 404. */
  form(id: string): FormRow {
    const form = this.deps.forms.byId(id);
    if (!form) throw notFound(`form ${id} not found`);
    return form;
  }

  /** Refuses a post before its body is read: submissions switched off, or a page origin the form does not allow (403). */
  admit(form: FormRow, page: string | null): void {
    if (!form.submissions_enabled) throw forbidden('this form is not accepting submissions');
    if (!originAllowed(form.allowed_domains, page)) {
      throw forbidden(page === null ? 'this form accepts posts only from its allowed sites, and the request names none (no Origin or Referer)' : `this form does not accept posts from ${page}`);
    }
  }

  /** Judges and stores a parsed post; see the class comment for the order of the checks. */
  async accept(form: FormRow, post: IncomingSubmission): Promise<Accepted> {
    try {
      return await this.judgeAndStore(form, post);
    } catch (err) {
      this.deps.vault.remove(post.files.map((f) => f.path));
      throw err;
    }
  }

  private async judgeAndStore(form: FormRow, post: IncomingSubmission): Promise<Accepted> {
    const { [RECAPTCHA_FIELD]: _token, ...fields } = post.fields; // the CAPTCHA token is checked, not kept
    if (form.schema.enforce) {
      const problems = schemaMismatches(form.schema, fields, new Set(post.files.map((f) => f.field)));
      if (problems.length > 0) {
        throw new GslbError('API_UNPROCESSABLE', `the submission does not match the form's schema: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`, { extra: { errors: problems } });
      }
    }
    const tier = tierOf(this.deps.config(), form.tenantId);
    if (post.files.length > 0) this.assertFileRoom(tier, form.tenantId, post.files);
    const at = this.now();
    const emails = emailsOf(fields, emailFields(form));
    const verdict: SpamVerdict = await checkSpam({
      fields: post.fields,
      ip: post.ip,
      settings: form,
      emails,
      emailsThisHour: () => this.deps.submissions.fromEmailSince(form.id, emails[0]!, at - HOUR_MS),
    }, this.deps.spam);
    if (!verdict.spam) {
      const used = this.deps.submissions.submissionsInMonth(form.tenantId, at);
      if (used >= tier.limits.submissionsPerMonth) throw forbidden(`plan ${tier.name} allows ${tier.limits.submissionsPerMonth} submissions per month`);
    }
    const actions = verdict.spam ? [] : this.actionsFor(form, fields);
    const visitor = form.collect_visitor_info;
    const id = await this.deps.submissions.insert({
      tenantId: form.tenantId, formId: form.id, createdAt: at, fields, files: post.files, email: emails[0] ?? null,
      spam: verdict.spam, spamReason: verdict.spam ? verdict.reason : null, ip: visitor ? post.ip : null, userAgent: visitor ? post.userAgent : null,
    }, actions);
    if (!verdict.spam) this.deps.bus.emit('form_event', { tenantId: form.tenantId, formId: form.id, type: 'submission.created', payload: { form_id: form.id, submission_id: id, created_at: new Date(at).toISOString() } });
    return { id, spam: verdict.spam, reason: verdict.spam ? verdict.reason : null, queued: actions.length };
  }

  /**
   * The enabled actions of a form that take an event (their adapter's `takesEvent`) of a
   * submission whose conditions it meets: `submission.created` goes to every type but digests
   * (they send on their own schedule) and webhooks that subscribed to other events only;
   * `submission.claimed` and `submission.reminder` to webhook and n8n actions that list them in
   * `events`, and the reminder also to `email` actions.
   */
  actionsFor(form: FormRow, fields: SubmissionFields, event: 'submission.created' | 'submission.claimed' | 'submission.reminder' = 'submission.created'): string[] {
    return this.deps.forms.actionsOf(form.id)
      .filter((a) => a.enabled && adapterOf(a.type).takesEvent(a.config, event) && conditionsMatch(a.conditions, a.conditions_mode, (f) => valuesOf(fields, f)))
      .map((a) => a.id);
  }

  /** 403 when the tier stores no files, or these would pass its bytes. */
  private assertFileRoom(tier: WorkspaceTier, tenantId: string, files: readonly StoredFile[]): void {
    const limit = tier.limits.fileBytes;
    if (limit === 0) throw forbidden(`plan ${tier.name} does not include file uploads`);
    const adding = files.reduce((n, f) => n + f.size, 0);
    if (this.deps.submissions.fileBytes(tenantId) + adding > limit) throw forbidden(`plan ${tier.name} allows ${limit} bytes of files`);
  }
}
