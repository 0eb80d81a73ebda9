import { maskConfig } from '../actions/index.js';
import type { FormActionRow, FormRow } from './rows.js';
import { settingsOf } from './settings.js';
import { actionWarnings } from './signing-secret.js';

/** An ISO 8601 time from ms, or null. */
export const isoOrNull = (ms: number | null | undefined): string | null => (typeof ms === 'number' ? new Date(ms).toISOString() : null);

/**
 * A form as the API shows it (schema `api-forms.v1.schema.json#/$defs/Form`): its id (the public id
 * visitors post to), every setting, the expected-field schema, who owns it (`origin`, and `source`,
 * the manifest file of a git form) and its times (null for git forms).
 */
export function formView(row: FormRow) {
  return {
    id: row.id,
    ...settingsOf(row),
    schema: { fields: row.schema.fields, enforce: row.schema.enforce },
    origin: row.origin,
    source: row.source ?? null,
    created_at: isoOrNull(row.createdAt),
    updated_at: isoOrNull(row.updatedAt),
  };
}

/**
 * An action as the API shows it: secrets in its config masked, its pause (`paused_at`,
 * `pause_reason`: null unless the delivery worker paused it) and its warnings (docs/forms.md
 * "Actions").
 */
export function actionView(row: FormActionRow) {
  return {
    id: row.id,
    form_id: row.formId,
    type: row.type,
    name: row.name,
    enabled: row.enabled,
    config: maskConfig(row.type, row.config),
    conditions: row.conditions,
    conditions_mode: row.conditions_mode,
    paused_at: isoOrNull(row.pausedAt),
    pause_reason: row.pauseReason ?? null,
    warnings: actionWarnings(row),
    origin: row.origin,
    created_at: isoOrNull(row.createdAt),
    updated_at: isoOrNull(row.updatedAt),
  };
}
