import type { GenericRow } from '../../../core/model/types.js';
import type { ActionTypeName } from '../actions/adapter.js';
import type { Condition, ConditionsMode } from './conditions.js';
import type { FormSchema } from './schema-fields.js';
import type { FormSettings } from './settings.js';

/** Row kind of a form (core/model/kinds.ts). */
export const FORM_KIND = 'form';
/** Row kind of a form's action, a child of its form (`formId`), deleted with it. */
export const ACTION_KIND = 'formaction';

/**
 * A form (row kind `form`), owned by one workspace (tenant). Its public id is the row id. The
 * settings keep the spec's snake_case names; times are ms since the epoch, null on rows declared
 * in git (a plan from git is pure and carries no clock).
 */
export interface FormRow extends GenericRow, FormSettings {
  kind: 'form';
  schema: FormSchema;
  createdAt: number | null;
  updatedAt: number | null;
}

/** An action of a form (row kind `formaction`, child of the form through `formId`). */
export interface FormActionRow extends GenericRow {
  kind: 'formaction';
  formId: string;
  type: ActionTypeName;
  name: string | null;
  enabled: boolean;
  config: Record<string, unknown>;
  conditions: Condition[];
  conditions_mode: ConditionsMode;
  /** when the delivery worker paused it after repeated failures (ms); absent or null otherwise, and cleared when it is enabled again */
  pausedAt?: number | null;
  /** why it was paused: the run of failures and the last error */
  pauseReason?: string | null;
  createdAt: number | null;
  updatedAt: number | null;
}
