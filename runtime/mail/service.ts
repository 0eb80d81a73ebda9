import { hostname } from 'node:os';
import { rootCertificates } from 'node:tls';
import nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import type { Logger } from '../log/logger.js';
import type { MailMessage, MailPort } from './port.js';
import type { MailSettingsStore, StoredMailSettings } from './settings-store.js';
import { settingsFromInput, viewOf, type MailSettings, type MailSettingsInput, type MailSettingsView, type MailSource } from './settings.js';

/** What the SMTP server answered for one message. */
export interface SendResult {
  accepted: string[];
  rejected: string[];
  response: string;
  messageId: string;
  /** `host:port` of the server that took the message */
  server: string;
}

/** What a MailService needs: storage, the file's relays, a logger; TLS trust and deadlines for tests. */
export interface MailServiceOptions {
  store: MailSettingsStore;
  /** the file's `alerts.smtp` items, converted; the first is primary, the rest are fallback relays */
  file: MailSettings[];
  log: Logger;
  /** extra trusted CA certificates (PEM) for TLS to the mail server; the system store is used too */
  tlsCa?: string | Buffer;
  /** SMTP connection, greeting and idle deadline; default 15 s */
  timeoutMs?: number;
  now?: () => number;
}

type Active =
  | { source: 'database'; list: MailSettings[]; passwordError?: string }
  | { source: 'file'; list: MailSettings[] }
  | { source: 'none'; list: [] };

/** A nodemailer failure reduced to a line for the API and the log: code, server reply, message. */
export function describeMailError(err: unknown, secrets: string[] = []): string {
  const e = err as { code?: string; responseCode?: number; response?: string; message?: string };
  let out = [e.code, e.message].filter(Boolean).join(': ') || String(err);
  if (e.response && !out.includes(e.response)) out += ` (server said: ${e.response})`;
  for (const s of secrets) if (s) out = out.split(s).join('[redacted]');
  return out;
}

/**
 * The real MailPort (installed as core.mail). Active settings: the stored ones when a row exists
 * (they take precedence and apply at once), else the file's `alerts.smtp`, else none. After DELETE
 * nothing is active until the next restart (gslb-config-auth.md §4). One SMTP connection per
 * message; no pooling, so a settings change applies to the very next message.
 */
export class MailService implements MailPort {
  private active: Active;
  private readonly timeoutMs: number;
  private readonly now: () => number;

  constructor(private readonly opts: MailServiceOptions) {
    this.timeoutMs = opts.timeoutMs ?? 15_000;
    this.now = opts.now ?? Date.now;
    this.active = this.initial(opts.store.load());
  }

  private initial(stored: StoredMailSettings | undefined): Active {
    if (stored) {
      if (stored.passwordError) this.opts.log.error({ detail: stored.passwordError }, 'stored mail password unreadable');
      return stored.passwordError ? { source: 'database', list: [stored.settings], passwordError: stored.passwordError } : { source: 'database', list: [stored.settings] };
    }
    if (this.opts.file.length) return { source: 'file', list: this.opts.file };
    return { source: 'none', list: [] };
  }

  /** The primary active settings and their source. */
  current(): { settings: MailSettings | undefined; source: MailSource } {
    return { settings: this.active.list[0], source: this.active.source };
  }

  /** The API view of the active settings (never the password). */
  view(): MailSettingsView {
    const v = viewOf(this.active.list[0], this.active.source);
    if (this.active.source === 'database' && this.active.passwordError) v.hasPassword = true;
    return v;
  }

  configured(): boolean {
    const s = this.active.list[0];
    return s !== undefined && s.enabled && s.host !== '';
  }

  alertRecipients(): string[] {
    return this.configured() ? [...this.active.list[0]!.to] : [];
  }

  /**
   * Validates and stores new settings; they apply to the next message. An omitted or empty
   * password keeps the stored one. Returns the new view, or the list of problems (nothing stored).
   */
  put(input: MailSettingsInput): MailSettingsView | string[] {
    const stored = this.active.source === 'database' ? this.active.list[0] : undefined;
    const next = settingsFromInput(input, stored);
    if (Array.isArray(next)) return next;
    const keepSealed = !input.password && this.active.source === 'database' && this.active.passwordError !== undefined;
    this.opts.store.save(next, this.now(), keepSealed);
    this.active = keepSealed && this.active.source === 'database' && this.active.passwordError
      ? { source: 'database', list: [next], passwordError: this.active.passwordError }
      : { source: 'database', list: [next] };
    this.opts.log.info({ host: next.host, port: next.port, enabled: next.enabled }, 'mail settings stored');
    return this.view();
  }

  /** Clears the stored settings and switches mail off until the next restart. */
  clear(): void {
    this.opts.store.clear();
    this.active = { source: 'none', list: [] };
    this.opts.log.info('mail settings cleared; mail is off until the next restart');
  }

  async send(msg: MailMessage): Promise<{ accepted: string[]; response: string }> {
    if (!this.configured()) {
      throw new Error(this.active.list[0] ? 'mail is switched off (enabled=false in the mail settings)' : 'mail is not configured: set alerts.smtp in the file or PUT /api/v1/settings/smtp');
    }
    const r = await this.deliver(msg, this.active.list);
    return { accepted: r.accepted, response: r.response };
  }

  /**
   * Sends `msg` with the saved settings even when they are switched off (so an operator can check
   * them before enabling). Throws with the server's error detail.
   */
  async sendTest(msg: MailMessage): Promise<SendResult> {
    if (this.active.list.length === 0) throw new Error('no mail settings: PUT /api/v1/settings/smtp or set alerts.smtp in the file');
    return this.deliver(msg, this.active.list);
  }

  /** Tries each relay in order; the first that takes the message wins. Throws the last error. */
  private async deliver(msg: MailMessage, list: MailSettings[]): Promise<SendResult> {
    if (this.active.source === 'database' && this.active.passwordError) throw new Error(this.active.passwordError);
    let last: unknown;
    for (const s of list) {
      try {
        return await this.sendVia(s, msg);
      } catch (err) {
        last = err;
        this.opts.log.warn({ server: `${s.host}:${s.port}`, detail: describeMailError(err, [s.password]) }, 'mail send failed');
      }
    }
    throw new Error(describeMailError(last, list.map((s) => s.password)), { cause: last });
  }

  private async sendVia(s: MailSettings, msg: MailMessage): Promise<SendResult> {
    const transport = nodemailer.createTransport(this.transportOptions(s));
    try {
      const info = await transport.sendMail({
        from: s.from || `gslbd@${hostname()}`,
        to: msg.to, subject: msg.subject, text: msg.text, ...(msg.html ? { html: msg.html } : {}),
        disableFileAccess: true, disableUrlAccess: true,
      });
      const addr = (a: string | { address: string }) => (typeof a === 'string' ? a : a.address);
      return { accepted: info.accepted.map(addr), rejected: info.rejected.map(addr), response: info.response, messageId: info.messageId, server: `${s.host}:${s.port}` };
    } finally {
      transport.close();
    }
  }

  /**
   * tls → implicit TLS. startTls → upgrade when the server offers it, and insist on it when a
   * username is set so that credentials never cross in the clear. Neither → plain SMTP, no upgrade.
   */
  private transportOptions(s: MailSettings): SMTPTransport.Options {
    return {
      host: s.host, port: s.port, secure: s.tls,
      requireTLS: !s.tls && s.startTls && s.username !== '',
      ignoreTLS: !s.tls && !s.startTls,
      ...(s.username ? { auth: { user: s.username, pass: s.password } } : {}),
      connectionTimeout: this.timeoutMs, greetingTimeout: this.timeoutMs, socketTimeout: this.timeoutMs, dnsTimeout: this.timeoutMs,
      tls: { minVersion: 'TLSv1.2', ...(this.opts.tlsCa ? { ca: [...rootCertificates, this.opts.tlsCa.toString()] } : {}) },
    };
  }
}
