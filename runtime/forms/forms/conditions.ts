import type { SettingProblem } from './settings.js';

/** Condition operators (forms-api.md §2 "Condition object"). */
export const CONDITION_OPS = ['equals', 'not_equals', 'contains', 'not_contains', 'starts_with', 'empty', 'not_empty', 'gt', 'lt'] as const;
export type ConditionOp = (typeof CONDITION_OPS)[number];

/** A test on one submission field; an action runs only for submissions matching its conditions. */
export interface Condition {
  field: string;
  op: ConditionOp;
  value?: string;
}

/** How an action's conditions combine: every one (`all`, the default) or at least one (`any`). */
export type ConditionsMode = 'all' | 'any';

/** Operators that test the field alone and take no value. */
const VALUELESS: ReadonlySet<ConditionOp> = new Set(['empty', 'not_empty']);

/**
 * Rules the JSON schema cannot express (docs/forms.md "Actions"): a field name that is not empty,
 * a `value` for every operator but `empty` and `not_empty` (which take none), and a number for
 * `gt` and `lt`. Returns every problem at `conditions[i]`. Pure.
 */
export function conditionProblems(conditions: readonly Condition[]): SettingProblem[] {
  const out: SettingProblem[] = [];
  conditions.forEach((c, i) => {
    const at = `conditions[${i}]`;
    if (c.field.trim() === '') out.push({ field: `${at}.field`, rule: 'must not be empty' });
    if (VALUELESS.has(c.op)) {
      if (c.value !== undefined) out.push({ field: `${at}.value`, rule: `op ${c.op} takes no value` });
    } else if (c.value === undefined) {
      out.push({ field: `${at}.value`, rule: `required with op ${c.op}` });
    } else if ((c.op === 'gt' || c.op === 'lt') && (c.value.trim() === '' || !Number.isFinite(Number(c.value)))) {
      out.push({ field: `${at}.value`, rule: `must be a number with op ${c.op}` });
    }
  });
  return out;
}
