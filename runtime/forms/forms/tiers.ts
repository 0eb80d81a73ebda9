import type { Config, FormTierConfig } from '../../config/types.js';
import { forbidden } from '../../errors.js';

/** A feature a tier may include (`forms.tiers.<name>.features`). */
export type TierFeature = 'recaptcha' | 'customDomains';

/**
 * A workspace's billing tier: its name and limits (docs/forms.md "Tiers"). The public API calls
 * it the workspace's plan (forms-api.md: GET /plan, its `plan` field, 403 "plan … allows …"), so
 * the answers keep that word; in gslbd a plan is a change set.
 */
export interface WorkspaceTier {
  name: string;
  limits: FormTierConfig;
}

/** What a workspace uses of its tier's limits. */
export interface TierUsage {
  forms: number;
  actions: number;
  submissionsThisMonth: number;
}

/**
 * The tier of a workspace (tenant): `forms.tenantTiers[tenant]`, else `forms.defaultTier`. The
 * config check makes sure both name a tier of `forms.tiers`.
 */
export function tierOf(forms: Config['forms'], tenantId: string): WorkspaceTier {
  const name = Object.hasOwn(forms.tenantTiers, tenantId) ? forms.tenantTiers[tenantId]! : forms.defaultTier;
  return { name, limits: forms.tiers[name]! };
}

/** True when the tier includes the feature. */
export function tierHas(tier: WorkspaceTier, feature: TierFeature): boolean {
  return (tier.limits.features ?? []).includes(feature);
}

/** Throws 403 (`forbidden`) when the workspace would have more than its tier's forms with `adding` more. */
export function assertFormsAllowed(tier: WorkspaceTier, current: number, adding = 1): void {
  if (current + adding > tier.limits.forms) throw forbidden(`plan ${tier.name} allows ${tier.limits.forms} forms`);
}

/** Throws 403 (`forbidden`) when a form would have more than its tier's actions with `adding` more. */
export function assertActionsAllowed(tier: WorkspaceTier, current: number, adding = 1): void {
  if (current + adding > tier.limits.actionsPerForm) throw forbidden(`plan ${tier.name} allows ${tier.limits.actionsPerForm} actions per form`);
}

/** Throws 403 (`forbidden`) naming the setting when the tier lacks the feature it needs. */
export function assertFeature(tier: WorkspaceTier, feature: TierFeature, setting: string): void {
  if (!tierHas(tier, feature)) throw forbidden(`plan ${tier.name} does not include ${feature} (needed by ${setting})`);
}

/** The body of GET /plan (forms-api.md §4): the tier's name as `plan`, its limits and usage, in the API's snake_case. */
export function tierView(tier: WorkspaceTier, usage: TierUsage) {
  const l = tier.limits;
  return {
    plan: tier.name,
    limits: {
      forms: l.forms,
      actions_per_form: l.actionsPerForm,
      submissions_per_month: l.submissionsPerMonth,
      file_bytes: l.fileBytes,
      features: { recaptcha: tierHas(tier, 'recaptcha'), custom_domains: tierHas(tier, 'customDomains') },
    },
    usage: { forms: usage.forms, actions: usage.actions, submissions_this_month: usage.submissionsThisMonth },
  };
}
