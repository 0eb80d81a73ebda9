import type { FormSettings } from '../../forms/settings.js';
import type { SubmissionFields } from '../../submissions/types.js';
import { valuesOf } from '../fields.js';
import { blockedIpReason, compileBlockList, type BlockedRange } from './blocked-ips.js';
import { disposableReason, type DisposableDomains } from './disposable.js';
import { emailRateReason } from './email-rate.js';
import { honeypotReason } from './honeypot.js';
import { linksReason } from './links.js';
import { RECAPTCHA_FIELD, verifyRecaptcha, type RecaptchaConfig } from './recaptcha.js';

/** A submission as the spam defences see it. */
export interface SpamContext {
  fields: SubmissionFields;
  ip: string;
  settings: Pick<FormSettings, 'honeypot_field' | 'max_links' | 'block_disposable_emails' | 'max_per_email_per_hour' | 'blocked_ips' | 'recaptcha_min_score'>;
  /** the addresses it carries (./emails.ts) */
  emails: readonly string[];
  /** submissions (spam or not) of `emails[0]` to this form in the last hour; called only when needed */
  emailsThisHour: () => number;
}

/** What the defences need besides the submission. */
export interface SpamDeps {
  disposable: DisposableDomains;
  recaptcha: RecaptchaConfig | null;
  blockList: (entries: readonly string[]) => readonly BlockedRange[];
}

export type SpamVerdict = { spam: false } | { spam: true; reason: string };

const CLEAN: SpamVerdict = Object.freeze({ spam: false });

/** `blocked_ips` compiled once per list (a form row's list is replaced, never changed in place). */
export function cachedBlockLists(): (entries: readonly string[]) => readonly BlockedRange[] {
  const cache = new WeakMap<readonly string[], readonly BlockedRange[]>();
  return (entries) => {
    let c = cache.get(entries);
    if (!c) cache.set(entries, (c = compileBlockList(entries)));
    return c;
  };
}

/** The first synchronous defence that objects, in order: honeypot, blocked addresses, links, disposable addresses, per-address rate. */
function syncReason(ctx: SpamContext, deps: SpamDeps): string | null {
  const s = ctx.settings;
  return honeypotReason(ctx.fields, s.honeypot_field)
    ?? blockedIpReason(ctx.ip, deps.blockList(s.blocked_ips))
    ?? linksReason(ctx.fields, s.max_links)
    ?? (s.block_disposable_emails ? disposableReason(ctx.emails, deps.disposable) : null)
    ?? (s.max_per_email_per_hour > 0 && ctx.emails.length > 0 ? emailRateReason(ctx.emailsThisHour(), s.max_per_email_per_hour) : null);
}

/**
 * The spam pipeline (forms-api.md §3 rule 7; docs/forms.md "Spam"): the synchronous defences,
 * then, only when they pass and the form sets `recaptcha_min_score`, the reCAPTCHA verification.
 * The first reason wins.
 */
export async function checkSpam(ctx: SpamContext, deps: SpamDeps): Promise<SpamVerdict> {
  const reason = syncReason(ctx, deps);
  if (reason !== null) return { spam: true, reason };
  const min = ctx.settings.recaptcha_min_score;
  if (min === null) return CLEAN;
  if (!deps.recaptcha) return { spam: true, reason: 'recaptcha is not configured on this server (forms.recaptcha)' };
  const r = await verifyRecaptcha(deps.recaptcha, valuesOf(ctx.fields, RECAPTCHA_FIELD)[0], min, ctx.ip);
  return r === null ? CLEAN : { spam: true, reason: r };
}
