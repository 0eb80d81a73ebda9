import type { Core } from '../../app.js';
import { childrenOf, getRow, rowsOf, type Snapshot } from '../../../core/snapshot/snapshot.js';
import type { Plan } from '../../../core/plan/types.js';
import { planCreate, planCreateAll, planDelete, planUpdate } from '../../../core/plan/delta.js';
import { ACTION_KIND, FORM_KIND, type FormActionRow, type FormRow } from './rows.js';
import type { FormSchema } from './schema-fields.js';
import type { FormSettings } from './settings.js';
import type { ActionFields } from './actions.js';

/** What the store needs of the core: the Snapshot, the one write path, ids and revisions. */
export type FormCore = Pick<Core, 'holder' | 'apply' | 'apiRevision' | 'newId'>;

/**
 * Forms and their actions as rows. Reads come from the current Snapshot; every write is one plan
 * through `core.apply` (DESIGN decision 1), so a write to a git-owned form is refused with 409
 * naming its file (core/plan/delta.ts). Rows of other workspaces are never returned.
 * No validation here: callers pass checked values (./service.ts).
 */
export class FormStore {
  constructor(private readonly core: FormCore, private readonly now: () => number = Date.now) {}

  /** Every form of every workspace (the scheduled runs). */
  allForms(): FormRow[] {
    return [...rowsOf<FormRow>(this.core.holder.current, FORM_KIND).values()];
  }

  /** The workspace's forms, in storage order. */
  formsOf(tenantId: string): FormRow[] {
    return [...rowsOf<FormRow>(this.core.holder.current, FORM_KIND).values()].filter((r) => r.tenantId === tenantId);
  }

  /** The workspace's form with this id, or undefined (another workspace's form included). */
  find(tenantId: string, id: string): FormRow | undefined {
    const row = getRow<FormRow>(this.core.holder.current, FORM_KIND, id);
    return row && row.tenantId === tenantId ? row : undefined;
  }

  /** The form with this public id, whatever its workspace (the public endpoint's lookup), or undefined. */
  byId(id: string): FormRow | undefined {
    return getRow<FormRow>(this.core.holder.current, FORM_KIND, id);
  }

  /** A form's actions, in storage order. */
  actionsOf(formId: string): readonly FormActionRow[] {
    return childrenOf<FormActionRow>(this.core.holder.current, formId, ACTION_KIND);
  }

  /** Creates a form of the workspace with an empty schema. */
  create(tenantId: string, settings: FormSettings, schema: FormSchema): FormRow {
    const t = this.now();
    const row: FormRow = { kind: 'form', id: this.core.newId(), origin: 'api', revision: '', tenantId, ...settings, schema, createdAt: t, updatedAt: t };
    return this.write((s, rev) => planCreate(s, row, rev), row.id);
  }

  /** Replaces a form's settings and schema (a git form: 409). */
  update(row: FormRow, settings: FormSettings, schema: FormSchema = row.schema): FormRow {
    const next: FormRow = { ...row, ...settings, schema, updatedAt: this.now() };
    return this.write((s, rev) => planUpdate(s, row, next, rev), row.id);
  }

  /** Deletes a form with its actions (a git form: 409); returns how many actions went with it. */
  remove(row: FormRow): { actionsDeleted: number } {
    const actionsDeleted = this.actionsOf(row.id).length;
    this.apply((s, rev) => planDelete(s, row, rev));
    return { actionsDeleted };
  }

  /** A new form of the same workspace with these settings, the source's schema and a copy of each of its actions; one plan. */
  duplicate(source: FormRow, settings: FormSettings): FormRow {
    const t = this.now();
    const copy: FormRow = { kind: 'form', id: this.core.newId(), origin: 'api', revision: '', tenantId: source.tenantId, ...settings, schema: structuredClone(source.schema), createdAt: t, updatedAt: t };
    const actions = this.actionsOf(source.id).map((a): FormActionRow => ({
      ...structuredClone(a), id: this.core.newId(), formId: copy.id, origin: 'api', revision: '', source: undefined, key: undefined, createdAt: t, updatedAt: t,
    }));
    return this.write((s, rev) => planCreateAll(s, [copy, ...actions], rev), copy.id);
  }

  /** Adds an action to a form (a git form: 409). */
  addAction(form: FormRow, fields: ActionFields): FormActionRow {
    const t = this.now();
    const row: FormActionRow = { kind: 'formaction', id: this.core.newId(), origin: 'api', revision: '', tenantId: form.tenantId, formId: form.id, ...fields, createdAt: t, updatedAt: t };
    this.apply((s, rev) => planCreate(s, row, rev));
    return getRow<FormActionRow>(this.core.holder.current, ACTION_KIND, row.id)!;
  }

  /** Every action of a type, with its form, across workspaces (the digest runs). */
  actionsOfType(type: FormActionRow['type']): { action: FormActionRow; form: FormRow }[] {
    const out: { action: FormActionRow; form: FormRow }[] = [];
    for (const a of rowsOf<FormActionRow>(this.core.holder.current, ACTION_KIND).values()) {
      const form = a.type === type ? this.byId(a.formId) : undefined;
      if (form) out.push({ action: a, form });
    }
    return out;
  }

  /** The action with this id, whatever its workspace, or undefined. */
  actionById(id: string): FormActionRow | undefined {
    return getRow<FormActionRow>(this.core.holder.current, ACTION_KIND, id);
  }

  /** Replaces an action's fields (a git action: 409). */
  updateAction(row: FormActionRow, fields: ActionFields): FormActionRow {
    const next: FormActionRow = { ...row, ...fields, updatedAt: this.now() };
    this.apply((s, rev) => planUpdate(s, row, next, rev));
    return getRow<FormActionRow>(this.core.holder.current, ACTION_KIND, row.id)!;
  }

  /** Deletes an action (a git action: 409). */
  removeAction(row: FormActionRow): void {
    this.apply((s, rev) => planDelete(s, row, rev));
  }

  /** Plans against the current Snapshot with a fresh revision, applies, and returns the form as stored. */
  private write(build: (s: Snapshot, revision: string) => Plan, id: string): FormRow {
    this.apply(build);
    return getRow<FormRow>(this.core.holder.current, FORM_KIND, id)!;
  }

  private apply(build: (s: Snapshot, revision: string) => Plan): void {
    this.core.apply(build(this.core.holder.current, this.core.apiRevision()));
  }
}
