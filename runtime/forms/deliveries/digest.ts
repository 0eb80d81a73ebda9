import { escapeHtml } from '../forms/snippets.js';
import type { MailMessage } from '../../ports/mail.js';
import { fieldPairs, type DeliveryContext } from './context.js';

/** How long a digest's window is. */
export const DIGEST_WINDOW_MS = { hourly: 3_600_000, daily: 86_400_000, weekly: 604_800_000 } as const;
export type DigestInterval = keyof typeof DIGEST_WINDOW_MS;

/**
 * The window a digest covers at `now`: the last whole hour, day or week (UTC) before `now`, e.g.
 * hourly at 10:20 covers 09:00–10:00; weekly windows start on Monday. Pure.
 */
export function digestWindow(interval: DigestInterval, now: number): { start: number; end: number } {
  const size = DIGEST_WINDOW_MS[interval];
  const monday = 4 * 86_400_000; // the epoch was a Thursday: Mondays fall 4 days after each week boundary
  const offset = interval === 'weekly' ? monday : 0;
  const end = Math.floor((now - offset) / size) * size + offset;
  return { start: end - size, end };
}

type Sub = DeliveryContext['submission'];

/** The digest e-mail of a window's submissions (`label` names the window). */
export function digestMessage(config: Readonly<Record<string, unknown>>, form: { name: string }, subs: readonly Sub[], label: string): MailMessage {
  const to = typeof config.to === 'string' ? [config.to] : (config.to as string[]);
  const subject = typeof config.subject === 'string' && config.subject !== '' ? config.subject : `${form.name}: ${subs.length} submission${subs.length === 1 ? '' : 's'} (${label})`;
  const text = [`${subs.length} submission${subs.length === 1 ? '' : 's'} to ${form.name} (${label})`, '',
    ...subs.flatMap((s) => [`#${s.id ?? 'test'} at ${s.created_at}`, ...fieldPairs(s.data).map(([k, v]) => `  ${k}: ${v}`), ''])].join('\n');
  const html = `<p>${subs.length} submission${subs.length === 1 ? '' : 's'} to <b>${escapeHtml(form.name)}</b> (${escapeHtml(label)})</p>`
    + subs.map((s) => `<h4>#${s.id ?? 'test'} at ${escapeHtml(s.created_at)}</h4><table cellpadding="3">${fieldPairs(s.data).map(([k, v]) => `<tr><th align="left">${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join('')}</table>`).join('');
  return { to, subject: subject.replace(/[\r\n]+/g, ' '), text, html };
}
