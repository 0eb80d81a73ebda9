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

/** Whether one value passes a positive test (every op but the `not_` ones, which negate it). */
function passes(op: ConditionOp, v: string, want: string): boolean {
  switch (op) {
    case 'equals': case 'not_equals': return v.trim() === want.trim();
    case 'contains': case 'not_contains': return v.toLowerCase().includes(want.toLowerCase());
    case 'starts_with': return v.trim().toLowerCase().startsWith(want.trim().toLowerCase());
    case 'gt': case 'lt': {
      const a = Number(v);
      const b = Number(want);
      if (v.trim() === '' || !Number.isFinite(a)) return false;
      return op === 'gt' ? a > b : a < b;
    }
    default: return false;
  }
}

/**
 * Whether a submission's field passes a condition (docs/forms.md "Actions"). `equals` compares
 * trimmed text exactly; `contains` and `starts_with` ignore case; `gt` and `lt` compare numbers
 * (a field that is not a number passes neither); `empty` holds for a missing or blank field. A
 * field with several values passes a test when one of them does, and a `not_` test when none
 * passes its positive test. Pure.
 */
export function conditionHolds(c: Condition, values: readonly string[]): boolean {
  const filled = values.filter((v) => v.trim() !== '');
  if (c.op === 'empty') return filled.length === 0;
  if (c.op === 'not_empty') return filled.length > 0;
  const any = values.some((v) => passes(c.op, v, c.value ?? ''));
  return c.op === 'not_equals' || c.op === 'not_contains' ? !any : any;
}

/** Whether an action with these conditions runs for a submission: no conditions, or all (`all`) or one (`any`) of them hold. Pure. */
export function conditionsMatch(conditions: readonly Condition[], mode: ConditionsMode, valuesOf: (field: string) => readonly string[]): boolean {
  if (conditions.length === 0) return true;
  const holds = (c: Condition) => conditionHolds(c, valuesOf(c.field));
  return mode === 'any' ? conditions.some(holds) : conditions.every(holds);
}
