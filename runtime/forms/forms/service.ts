import type { Config } from '../../config/types.js';
import { badRequest, notFound } from '../../errors.js';
import { actionFields, actionProblems, changeAction, type ActionInput, type ActionPatch } from './actions.js';
import { assertActionsAllowed, assertFeature, assertFormsAllowed, tierOf, type TierUsage, type WorkspaceTier } from './tiers.js';
import type { FormActionRow, FormRow } from './rows.js';
import { withSigningSecret } from './signing-secret.js';
import { buildSchema, EMPTY_SCHEMA, schemaProblems, type SchemaField } from './schema-fields.js';
import { changeSettings, createSettings, problemsMessage, settingsOf, settingsProblems, type SettingProblem, type SettingsInput } from './settings.js';
import type { FormStore } from './store.js';
import { assertApiWritable } from '../../../core/plan/delta.js';

/** What the form operations read of the stored submissions (../submissions/store.ts). */
export interface SubmissionFacts {
  submissionsInMonth(tenantId: string, at: number): number;
  receivedFields(formId: string): string[];
  countOf(formId: string): number;
}

/** Sort keys of the form list, the first the default (docs/forms.md "The /public/v1 API"). */
export const FORM_SORTS = ['created_at', 'updated_at', 'name'] as const;
export type FormSort = (typeof FORM_SORTS)[number];
export type SortOrder = 'asc' | 'desc';

/** The longest form name. */
export const NAME_MAX = 200;

/** Throws 400 `validation_error` listing every problem, when there is one. */
function refuse(problems: readonly SettingProblem[]): void {
  if (problems.length > 0) throw badRequest(problemsMessage(problems));
}

/** Forms in list order: by the sort key, then by id so pages are stable. Pure. */
export function sortForms(rows: readonly FormRow[], sort: FormSort, order: SortOrder): FormRow[] {
  const keyOf = (r: FormRow): number | string => (sort === 'name' ? r.name.toLowerCase() : (sort === 'created_at' ? r.createdAt : r.updatedAt) ?? 0);
  const dir = order === 'asc' ? 1 : -1;
  return [...rows].sort((a, b) => {
    const ka = keyOf(a);
    const kb = keyOf(b);
    const c = ka < kb ? -1 : ka > kb ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
    return c * dir;
  });
}

/**
 * The form operations of /public/v1 for one workspace at a time: a git form refused first (409
 * naming its file), then validation (400 naming the field), the tier's limits and features (403
 * naming the tier), then one write through the store.
 * A form of another workspace is not found (404), exactly like a form that does not exist.
 */
export class FormService {
  constructor(private readonly store: FormStore, private readonly config: () => Config['forms'], private readonly submissions: SubmissionFacts, private readonly now: () => number = Date.now) {}

  /** The workspace's tier (docs/forms.md "Tiers"). */
  tierOf(tenantId: string): WorkspaceTier {
    return tierOf(this.config(), tenantId);
  }

  /** What the workspace uses: forms, actions, and submissions this month (UTC; spam not counted). */
  usage(tenantId: string): TierUsage {
    const forms = this.store.formsOf(tenantId);
    return {
      forms: forms.length, actions: forms.reduce((n, f) => n + this.store.actionsOf(f.id).length, 0),
      submissionsThisMonth: this.submissions.submissionsInMonth(tenantId, this.now()),
    };
  }

  /** The field names a form receives: those actually received once there are some, else its schema's. */
  fieldsOf(form: FormRow): { fields: string[]; source: 'submissions' | 'schema' } {
    const received = this.submissions.receivedFields(form.id);
    return received.length > 0 ? { fields: received, source: 'submissions' } : { fields: form.schema.fields.map((f) => f.name), source: 'schema' };
  }

  /** The workspace's forms, `only` narrowing them to one (a single-form key), sorted. */
  list(tenantId: string, only: string | null, sort: FormSort, order: SortOrder): FormRow[] {
    const rows = this.store.formsOf(tenantId).filter((r) => only === null || r.id === only);
    return sortForms(rows, sort, order);
  }

  /** The workspace's form, or 404. */
  require(tenantId: string, id: string): FormRow {
    const row = this.store.find(tenantId, id);
    if (!row) throw notFound(`form ${id} not found`);
    return row;
  }

  /** A form's actions. */
  actionsOf(form: FormRow): readonly FormActionRow[] {
    return this.store.actionsOf(form.id);
  }

  /** Creates a form: settings checked, the tier's form count and features respected. */
  create(tenantId: string, input: SettingsInput): FormRow {
    const settings = createSettings(input);
    refuse(settingsProblems(settings));
    const tier = this.tierOf(tenantId);
    if (settings.recaptcha_min_score !== null) this.assertRecaptcha(tier);
    assertFormsAllowed(tier, this.store.formsOf(tenantId).length);
    return this.store.create(tenantId, settings, EMPTY_SCHEMA);
  }

  /** Changes the sent settings only (./settings.ts changeSettings); a score needs the recaptcha feature. */
  change(form: FormRow, patch: SettingsInput): FormRow {
    assertApiWritable(form);
    const settings = changeSettings(settingsOf(form), patch);
    refuse(settingsProblems(settings));
    if (typeof patch.recaptcha_min_score === 'number') this.assertRecaptcha(this.tierOf(form.tenantId));
    return this.store.update(form, settings);
  }

  /** Deletes a form with its actions, submissions and files when `confirmName` is its exact name (else 400). */
  remove(form: FormRow, confirmName: string): { actionsDeleted: number; submissionsDeleted: number } {
    assertApiWritable(form, 'delete');
    if (confirmName !== form.name) throw badRequest(`confirm_name: must equal the form's exact name "${form.name}"`);
    const submissionsDeleted = this.submissions.countOf(form.id);
    return { ...this.store.remove(form), submissionsDeleted };
  }

  /** A CAPTCHA score needs a tier with `recaptcha` (403) and a server that can verify tokens (`forms.recaptcha.secret`, else 400). */
  private assertRecaptcha(tier: WorkspaceTier): void {
    assertFeature(tier, 'recaptcha', 'recaptcha_min_score');
    if (!this.config().recaptcha.secret) throw badRequest('recaptcha_min_score: this server cannot verify reCAPTCHA tokens (forms.recaptcha.secret is not set)');
  }

  /** Copies a form with its settings, schema and actions, named `name` or `Copy of <name>`. */
  duplicate(form: FormRow, name: string | undefined): FormRow {
    const settings = { ...settingsOf(form), name: (name?.trim() || `Copy of ${form.name}`).slice(0, NAME_MAX) };
    const tier = this.tierOf(form.tenantId);
    if (settings.recaptcha_min_score !== null) this.assertRecaptcha(tier);
    assertFormsAllowed(tier, this.store.formsOf(form.tenantId).length);
    const actions = this.store.actionsOf(form.id).length;
    if (actions > 0) assertActionsAllowed(tier, 0, actions);
    return this.store.duplicate(form, settings);
  }

  /** Replaces the expected-field schema (an empty list clears it). */
  putSchema(form: FormRow, fields: readonly SchemaField[], enforce: boolean | undefined): FormRow {
    assertApiWritable(form);
    refuse(schemaProblems(fields));
    return this.store.update(form, settingsOf(form), buildSchema(fields, enforce));
  }

  /** The workspace's action, or 404 (another workspace's included). */
  requireAction(tenantId: string, id: string): FormActionRow {
    const row = this.store.actionById(id);
    if (!row || row.tenantId !== tenantId) throw notFound(`action ${id} not found`);
    return row;
  }

  /**
   * Changes an action: config keys merged, the whole checked (400 naming each problem); a git
   * action: 409. Enabling it clears a pause. A `webhook` left without a secret gets one generated
   * (./signing-secret.ts), returned as `generatedSecret` for the answer to show once.
   */
  changeAction(action: FormActionRow, patch: ActionPatch): { action: FormActionRow; generatedSecret: string | undefined } {
    assertApiWritable(action);
    const next = changeAction(action, patch);
    refuse(actionProblems(next));
    const signed = withSigningSecret(next);
    return { action: this.store.updateAction(action, signed.fields), generatedSecret: signed.generated };
  }

  /** Deletes an action (its queued deliveries go with it); a git action: 409. */
  removeAction(action: FormActionRow): void {
    assertApiWritable(action, 'delete');
    this.store.removeAction(action);
  }

  /**
   * Pauses an action that keeps failing: `enabled: false` with `pausedAt` and `pauseReason`, so it
   * is told apart from one switched off by hand. A git action is left as written (its file decides).
   */
  pauseAction(action: FormActionRow, reason: string, at: number): void {
    const current = this.store.actionById(action.id);
    if (current?.enabled && current.origin === 'api') this.store.updateAction(current, { ...current, enabled: false, pausedAt: at, pauseReason: reason });
  }

  /**
   * Adds an action: config and conditions checked, the tier's actions per form respected. A
   * `webhook` sent without a secret gets one generated, returned as `generatedSecret` for the
   * answer to show once.
   */
  addAction(form: FormRow, input: ActionInput): { action: FormActionRow; generatedSecret: string | undefined } {
    assertApiWritable(form, 'add to');
    const fields = actionFields(input);
    refuse(actionProblems(fields));
    assertActionsAllowed(this.tierOf(form.tenantId), this.store.actionsOf(form.id).length);
    const signed = withSigningSecret(fields);
    return { action: this.store.addAction(form, signed.fields), generatedSecret: signed.generated };
  }
}
