import type { SmtpFileConfig } from '../config/types.js';

/** Mail settings as the mailer uses them; `password` is plain text in memory only. */
export interface MailSettings {
  host: string;
  port: number;
  from: string;
  to: string[];
  username: string;
  password: string;
  /** implicit TLS (usually port 465) */
  tls: boolean;
  /** upgrade with STARTTLS (usually port 587) */
  startTls: boolean;
  enabled: boolean;
}

/** Where the active settings come from: stored at runtime, the file's `alerts.smtp`, or nowhere. */
export type MailSource = 'database' | 'file' | 'none';

/** The API view (gslb-config-auth.md §2): the password is never returned, only whether one is stored. */
export interface MailSettingsView extends Omit<MailSettings, 'password'> {
  hasPassword: boolean;
  source: MailSource;
}

/** Body of PUT /settings/smtp before defaults. Read-only fields sent back by a client are ignored. */
export interface MailSettingsInput {
  host: string;
  port?: number;
  from?: string;
  to?: string[];
  username?: string;
  password?: string;
  tls?: boolean;
  startTls?: boolean;
  enabled?: boolean;
}

/** Converts one `alerts.smtp` item of the file (always enabled: the file has no switch). */
export function fromFileItem(f: SmtpFileConfig): MailSettings {
  return {
    host: f.host, port: f.port, from: f.from ?? '', to: [...f.to], username: f.username ?? '', password: f.password ?? '',
    tls: f.tls, startTls: f.tls ? false : f.startTls, enabled: true,
  };
}

/** The API view of settings (no password). */
export function viewOf(s: MailSettings | undefined, source: MailSource): MailSettingsView {
  if (!s) return { host: '', port: 587, from: '', to: [], username: '', hasPassword: false, tls: false, startTls: true, enabled: false, source: 'none' };
  const { password, ...rest } = s;
  return { ...rest, to: [...s.to], hasPassword: password !== '', source };
}

const ADDRESS = /^[^\s@<>]+@[^\s@<>]+$/;

/** True for `user@host` or `Display Name <user@host>`. */
export function isMailAddress(s: string): boolean {
  const m = /^[^<>]*<([^<>]+)>$/.exec(s.trim());
  return ADDRESS.test(m ? m[1]! : s.trim());
}

/**
 * True when two settings log in to the same relay as the same account: same host (DNS names are
 * case-insensitive), port and username. Only then may a stored password be reused, so a changed
 * relay never receives the credentials of the old one.
 */
export function sameRelay(a: Pick<MailSettings, 'host' | 'port' | 'username'>, b: Pick<MailSettings, 'host' | 'port' | 'username'>): boolean {
  return a.host.toLowerCase() === b.host.toLowerCase() && a.port === b.port && a.username === b.username;
}

/**
 * Applies defaults to a PUT body and checks what the JSON schema cannot. When the body omits the
 * password or sends it empty, `stored` supplies it only if host, port and username are unchanged
 * (`sameRelay`); otherwise no password is kept. Returns the settings, or the list of problems.
 */
export function settingsFromInput(input: MailSettingsInput, stored: MailSettings | undefined): MailSettings | string[] {
  const problems: string[] = [];
  const tls = input.tls ?? false;
  const startTls = input.startTls ?? !tls;
  if (tls && startTls) problems.push('tls and startTls cannot both be true: tls is implicit TLS (port 465), startTls upgrades a plain connection (port 587)');
  const from = (input.from ?? '').trim();
  if (from && !isMailAddress(from)) problems.push(`from: "${from}" is not a mail address`);
  const to = (input.to ?? []).map((t) => t.trim());
  for (const t of to) if (!isMailAddress(t)) problems.push(`to: "${t}" is not a mail address`);
  if (problems.length) return problems;
  const next = { host: input.host.trim(), port: input.port ?? (tls ? 465 : 587), username: input.username ?? '' };
  const kept = stored && sameRelay(next, stored) ? stored.password : '';
  return { ...next, from, to, password: input.password ? input.password : kept, tls, startTls, enabled: input.enabled ?? true };
}
