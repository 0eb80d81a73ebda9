import { isDomainName, isIpAddress, parseCidr } from '../../net/ip.js';
import { isHttpUrl } from '../../config/text-rules.js';
import { publicSuffixRefusal } from '../../tenancy/public-suffix.js';

/**
 * A form's settings, exactly the request fields of forms-api.md §2 "Form settings", under the
 * spec's snake_case names (the API, the rows and `kind: Form` manifests all use them).
 */
export interface FormSettings {
  name: string;
  description: string;
  group: string;
  allowed_domains: string[];
  success_redirect: string;
  honeypot_field: string;
  recaptcha_min_score: number | null;
  submissions_enabled: boolean;
  collect_visitor_info: boolean;
  max_links: number;
  block_disposable_emails: boolean;
  max_per_email_per_hour: number;
  blocked_ips: string[];
  /** minutes until an unclaimed submission sends its one reminder; 0 = off (an extension of §2: docs/forms.md "Reminders") */
  reminder_after_minutes: number;
}

/** The settings' names, in the order of the spec's table. */
export const SETTING_NAMES = [
  'name', 'description', 'group', 'allowed_domains', 'success_redirect', 'honeypot_field', 'recaptcha_min_score',
  'submissions_enabled', 'collect_visitor_info', 'max_links', 'block_disposable_emails', 'max_per_email_per_hour', 'blocked_ips',
  'reminder_after_minutes',
] as const satisfies readonly (keyof FormSettings)[];

/**
 * Settings as a request sends them: any field may be absent, and null (docs/forms.md "Change
 * semantics": on create null takes the default; on change null leaves the field as it is, except
 * `recaptcha_min_score`, where null switches the check off).
 */
export type SettingsInput = { [K in keyof FormSettings]?: FormSettings[K] | null | undefined };

/** The default of every setting but the name (forms-api.md §2; `success_redirect` '' is the built-in thank-you page). */
export const DEFAULT_SETTINGS: Readonly<Omit<FormSettings, 'name'>> = Object.freeze({
  description: '',
  group: '',
  allowed_domains: [],
  success_redirect: '',
  honeypot_field: 'fc_honeypot',
  recaptcha_min_score: null,
  submissions_enabled: true,
  collect_visitor_info: false,
  max_links: 0,
  block_disposable_emails: false,
  max_per_email_per_hour: 0,
  blocked_ips: [],
  reminder_after_minutes: 0,
});

/** One broken rule: the field (`blocked_ips[2]`) and the rule. */
export interface SettingProblem { field: string; rule: string }

/** Trims each entry and drops empty entries and repeats, keeping the first occurrence's order. */
const cleanList = (list: readonly string[]): string[] => [...new Set(list.map((s) => s.trim()).filter((s) => s !== ''))];

/** One sent value in stored form: strings trimmed, lists cleaned, the rest as sent. */
function cleanValue(value: unknown): unknown {
  if (typeof value === 'string') return value.trim();
  if (Array.isArray(value)) return cleanList(value as string[]);
  return value;
}

/** Settings of a new form: the sent values, the defaults for the rest (and for nulls). Pure. */
export function createSettings(input: SettingsInput): FormSettings {
  const out: FormSettings = { name: '', ...structuredClone(DEFAULT_SETTINGS) as Omit<FormSettings, 'name'> };
  for (const key of SETTING_NAMES) {
    const v = input[key];
    if (v === undefined || v === null) continue;
    (out as unknown as Record<string, unknown>)[key] = cleanValue(v); // reason: key and value come from the same entry of FormSettings
  }
  if (out.honeypot_field === '') out.honeypot_field = DEFAULT_SETTINGS.honeypot_field;
  return out;
}

/**
 * Settings after a change (PATCH, forms-api.md §2): only sent fields change. Null leaves a field
 * as it is, except `recaptcha_min_score`, where null switches the check off. An empty string
 * resets `success_redirect` to the built-in page, ungroups `group`, clears `description` and
 * resets `honeypot_field` to `fc_honeypot`. A list replaces the whole list (an empty list clears
 * it). Pure; validation is {@link settingsProblems} on the result.
 */
export function changeSettings(current: FormSettings, patch: SettingsInput): FormSettings {
  const out: FormSettings = structuredClone(current);
  for (const key of SETTING_NAMES) {
    if (!Object.hasOwn(patch, key)) continue;
    const v = patch[key];
    if (v === undefined) continue;
    if (v === null) {
      if (key === 'recaptcha_min_score') out.recaptcha_min_score = null;
      continue;
    }
    (out as unknown as Record<string, unknown>)[key] = cleanValue(v); // reason: key and value come from the same entry of FormSettings
  }
  if (out.honeypot_field === '') out.honeypot_field = DEFAULT_SETTINGS.honeypot_field;
  return out;
}

/** True for an http(s) URL or a path on the form's own site (`/thanks`, not `//host`). */
export function isRedirectTarget(s: string): boolean {
  return isHttpUrl(s) || (s.startsWith('/') && !s.startsWith('//') && !/[\s\p{Cc}\\]/u.test(s));
}

/** True for a host (`example.com`, `*.example.com`, an IP address) or an http(s) URL. */
export function isAllowedDomain(s: string): boolean {
  return isHttpUrl(s) || isDomainName(s) || isIpAddress(s);
}

/**
 * Why a host entry of `allowed_domains` with a wildcard is refused, or undefined: `*` may only be
 * the first label (`*.example.com`), and the wildcard must stand under a public suffix, since
 * `*`, `*.` or `*.com` would let every site of that suffix post while looking like a restriction.
 */
export function wildcardDomainProblem(s: string): string | undefined {
  if (isHttpUrl(s) || !s.includes('*')) return undefined;
  if (s !== '*' && s.replace(/^\*\./, '').includes('*')) return `"${s}": a wildcard may only be the first label (*.example.com)`;
  const ps = publicSuffixRefusal(s);
  return ps ? `${ps.message}; name a site (example.com) or the subdomains of one (*.example.com)` : undefined;
}

/** True for an IP address or a CIDR range. */
export function isIpOrCidr(s: string): boolean {
  return isIpAddress(s) || parseCidr(s) !== undefined;
}

const HONEYPOT = /^[A-Za-z0-9_.[\]-]+$/;

/**
 * The rules the schema (api-forms.v1.schema.json: types, ranges, lengths) cannot express, checked
 * on complete settings: a name that is not blank, `success_redirect` an http(s) URL or a path
 * starting with `/` (or '' for the built-in page), `allowed_domains` hosts or URLs, `blocked_ips`
 * IPs or CIDRs, `honeypot_field` a field name. Returns every problem, not only the first. Pure.
 */
export function settingsProblems(s: FormSettings): SettingProblem[] {
  const out: SettingProblem[] = [];
  if (s.name.trim() === '') out.push({ field: 'name', rule: 'must not be empty' });
  if (s.success_redirect !== '' && !isRedirectTarget(s.success_redirect)) {
    out.push({ field: 'success_redirect', rule: 'must be an http or https URL or a path starting with /' });
  }
  s.allowed_domains.forEach((d, i) => {
    const wild = isAllowedDomain(d) ? wildcardDomainProblem(d) : `"${d}" is neither a host name nor an http or https URL`;
    if (wild) out.push({ field: `allowed_domains[${i}]`, rule: wild });
  });
  s.blocked_ips.forEach((ip, i) => {
    if (!isIpOrCidr(ip)) out.push({ field: `blocked_ips[${i}]`, rule: `"${ip}" is neither an IP address nor a CIDR range` });
  });
  if (!HONEYPOT.test(s.honeypot_field)) out.push({ field: 'honeypot_field', rule: 'must be letters, digits or _ . - [ ]' });
  return out;
}

/** The problems as one message: `field: rule; field: rule`. */
export function problemsMessage(problems: readonly SettingProblem[]): string {
  return problems.map((p) => `${p.field}: ${p.rule}`).join('; ');
}

/** Only the settings of a row or a larger object, in table order (for copies and views). */
export function settingsOf(source: FormSettings): FormSettings {
  const out = {} as Record<string, unknown>;
  // a row stored before a setting existed takes its default
  for (const key of SETTING_NAMES) out[key] = structuredClone(source[key] ?? (DEFAULT_SETTINGS as Record<string, unknown>)[key]);
  return out as unknown as FormSettings; // reason: every key of FormSettings was copied above
}
