import { configProblems, type ActionTypeName } from '../actions/index.js';
import { conditionProblems, type Condition, type ConditionsMode } from './conditions.js';
import type { FormActionRow } from './rows.js';
import type { SettingProblem } from './settings.js';

/** An action as POST /form/{id}/action sends it (forms-api.md §2 "Action"). */
export interface ActionInput {
  type: ActionTypeName;
  config: Record<string, unknown>;
  name?: string | null | undefined;
  enabled?: boolean | null | undefined;
  conditions?: Condition[] | null | undefined;
  conditions_mode?: ConditionsMode | null | undefined;
}

/** The fields of an action row that a request sets (the rest is identity and time), and its pause. */
export type ActionFields = Pick<FormActionRow, 'type' | 'name' | 'enabled' | 'config' | 'conditions' | 'conditions_mode' | 'pausedAt' | 'pauseReason'>;

/** A config without empty values: null and '' mean "not set". */
const cleanConfig = (config: Readonly<Record<string, unknown>>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(config).filter(([, v]) => v !== null && v !== ''));

/**
 * The fields of a new action: nulls take the defaults (`enabled` true, no name, no conditions,
 * `conditions_mode` all), the config loses its empty values, a condition keeps only the keys it
 * sent. Pure; validation is {@link actionProblems}.
 */
export function actionFields(input: ActionInput): ActionFields {
  const conditions = (input.conditions ?? []).map((c) => ({ field: c.field.trim(), op: c.op, ...(c.value === undefined ? {} : { value: c.value }) }));
  const name = input.name?.trim();
  return {
    type: input.type,
    name: name ? name : null,
    enabled: input.enabled ?? true,
    config: cleanConfig(input.config),
    conditions,
    conditions_mode: input.conditions_mode ?? 'all',
  };
}

/** Every problem of an action's fields: its config against its type, then its conditions. */
export function actionProblems(a: ActionFields): SettingProblem[] {
  return [...configProblems(a.type, a.config), ...conditionProblems(a.conditions)];
}

/** A change of an action as PATCH /action/{id} sends it: only sent fields change. */
export type ActionPatch = Partial<Omit<ActionInput, 'type' | 'config'>> & { config?: Record<string, unknown> | null | undefined };

/**
 * An action after a change (forms-api.md §2: "on change only the keys to change are sent and they
 * are merged over the existing config"): `config` keys are merged, a key sent as null or '' is
 * removed; `conditions` replace the list ([] clears it); null leaves any other field as it is
 * (`name: ''` clears the name). An action enabled after the change is no longer paused. Pure;
 * validation is {@link actionProblems} on the result.
 */
export function changeAction(current: ActionFields, patch: ActionPatch): ActionFields {
  const out: ActionFields = structuredClone(current);
  if (patch.config) out.config = cleanConfig({ ...current.config, ...patch.config });
  if (patch.name !== undefined && patch.name !== null) out.name = patch.name.trim() === '' ? null : patch.name.trim();
  if (patch.enabled !== undefined && patch.enabled !== null) out.enabled = patch.enabled;
  if (patch.conditions !== undefined && patch.conditions !== null) out.conditions = actionFields({ type: current.type, config: {}, conditions: patch.conditions }).conditions;
  if (patch.conditions_mode !== undefined && patch.conditions_mode !== null) out.conditions_mode = patch.conditions_mode;
  if (out.enabled && (out.pausedAt != null || out.pauseReason != null)) {
    out.pausedAt = null;
    out.pauseReason = null;
  }
  return out;
}
