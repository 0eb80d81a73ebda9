import type { Config, FormPlanConfig } from '../../config/types.js';
import { forbidden } from '../../errors.js';

/** A feature a plan may include (`forms.plans.<name>.features`). */
export type PlanFeature = 'recaptcha' | 'customDomains';

/** A workspace's plan: its name and limits (docs/forms.md "Plans"). */
export interface WorkspacePlan {
  name: string;
  limits: FormPlanConfig;
}

/** What a workspace uses of its plan's limits. */
export interface PlanUsage {
  forms: number;
  actions: number;
  submissionsThisMonth: number;
}

/**
 * The plan of a workspace (tenant): `forms.tenantPlans[tenant]`, else `forms.defaultPlan`. The
 * config check makes sure both name a plan of `forms.plans`.
 */
export function planOf(forms: Config['forms'], tenantId: string): WorkspacePlan {
  const name = Object.hasOwn(forms.tenantPlans, tenantId) ? forms.tenantPlans[tenantId]! : forms.defaultPlan;
  return { name, limits: forms.plans[name]! };
}

/** True when the plan includes the feature. */
export function planHas(plan: WorkspacePlan, feature: PlanFeature): boolean {
  return (plan.limits.features ?? []).includes(feature);
}

/** Throws 403 (`forbidden`) when the workspace would have more than its plan's forms with `adding` more. */
export function assertFormsAllowed(plan: WorkspacePlan, current: number, adding = 1): void {
  if (current + adding > plan.limits.forms) throw forbidden(`plan ${plan.name} allows ${plan.limits.forms} forms`);
}

/** Throws 403 (`forbidden`) when a form would have more than its plan's actions with `adding` more. */
export function assertActionsAllowed(plan: WorkspacePlan, current: number, adding = 1): void {
  if (current + adding > plan.limits.actionsPerForm) throw forbidden(`plan ${plan.name} allows ${plan.limits.actionsPerForm} actions per form`);
}

/** Throws 403 (`forbidden`) naming the setting when the plan lacks the feature it needs. */
export function assertFeature(plan: WorkspacePlan, feature: PlanFeature, setting: string): void {
  if (!planHas(plan, feature)) throw forbidden(`plan ${plan.name} does not include ${feature} (needed by ${setting})`);
}

/** The body of GET /plan: plan name, limits and usage, in the API's snake_case. */
export function planView(plan: WorkspacePlan, usage: PlanUsage) {
  const l = plan.limits;
  return {
    plan: plan.name,
    limits: {
      forms: l.forms,
      actions_per_form: l.actionsPerForm,
      submissions_per_month: l.submissionsPerMonth,
      file_bytes: l.fileBytes,
      features: { recaptcha: planHas(plan, 'recaptcha'), custom_domains: planHas(plan, 'customDomains') },
    },
    usage: { forms: usage.forms, actions: usage.actions, submissions_this_month: usage.submissionsThisMonth },
  };
}
