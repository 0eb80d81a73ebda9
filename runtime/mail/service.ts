import { hostname } from 'node:os';
import { rootCertificates } from 'node:tls';
import nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import type { Logger } from '../log/logger.js';
import type { Plan } from '../../core/plan/types.js';
import { DEFAULT_TENANT } from '../../core/model/types.js';
import { MAIL_KIND, SYSTEM_MAIL, SYSTEM_MAIL_ID, mailOwnerOf, ownerKey, type MailOwner } from './owner.js';
import type { MailMessage, MailPort } from '../ports/mail.js';
import type { MailSettingsStore } from './settings-store.js';
import { sameRelay, settingsFromInput, viewOf, type MailSettings, type MailSettingsInput, type MailSettingsView, type MailSource } from './settings.js';

/** What the SMTP server answered for one message. */
export interface SendResult {
  accepted: string[];
  rejected: string[];
  response: string;
  messageId: string;
  /** `host:port` of the server that took the message */
  server: string;
}

/** What a MailService needs: storage, the file's relays, a logger; pool ownership; TLS trust and deadlines for tests. */
export interface MailServiceOptions {
  store: MailSettingsStore;
  /** the file's `alerts.smtp` items, converted; the first is primary, the rest are fallback relays */
  file: MailSettings[];
  log: Logger;
  /** `tenancy.operatorTenant` (default `default`): its pools alert through the server-wide settings */
  operatorTenant?: string;
  /** the tenant of a pool, or undefined when the pool is unknown (health alerts route by it) */
  tenantOfPool?: (poolId: string) => string | undefined;
  /** extra trusted CA certificates (PEM) for TLS to the mail server; the system store is used too */
  tlsCa?: string | Buffer;
  /** SMTP connection, greeting and idle deadline; default 15 s */
  timeoutMs?: number;
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
 * The mailer for every owner of mail settings (docs/alerts.md "Mail settings"), and itself the
 * server-wide MailPort installed as core.mail. Active settings of an owner are read from its row at
 * each use, so a PUT (here or replicated from another node) applies to the very next message. The
 * server-wide owner falls back to the file's `alerts.smtp` while no `mail:system` row exists; after
 * a DELETE of that row nothing is active until the next restart (gslb-config-auth.md §4). A
 * tenant's owner has no fallback. One SMTP connection per message; no pooling.
 */
export class MailService implements MailPort {
  readonly scope = ownerKey(SYSTEM_MAIL);
  private readonly timeoutMs: number;
  private readonly operatorTenant: string;
  /** the server-wide row was deleted since start: the file does not apply again until restart */
  private systemCleared = false;
  private readonly mailers = new Map<string, MailPort>();

  constructor(private readonly opts: MailServiceOptions) {
    this.timeoutMs = opts.timeoutMs ?? 15_000;
    this.operatorTenant = opts.operatorTenant ?? DEFAULT_TENANT;
    for (const r of opts.store.rows()) {
      const owner = r.id === SYSTEM_MAIL_ID ? SYSTEM_MAIL : mailOwnerOf(r.tenantId, this.operatorTenant);
      const err = opts.store.load(owner)?.passwordError;
      if (err) opts.log.error({ owner: ownerKey(owner), detail: err }, 'stored mail password unreadable');
    }
  }

  private active(owner: MailOwner): Active {
    const stored = this.opts.store.load(owner);
    if (stored) return stored.passwordError ? { source: 'database', list: [stored.settings], passwordError: stored.passwordError } : { source: 'database', list: [stored.settings] };
    if (owner.scope === 'system' && !this.systemCleared && this.opts.file.length) return { source: 'file', list: this.opts.file };
    return { source: 'none', list: [] };
  }

  /** The owner's primary active settings and their source. */
  current(owner: MailOwner): { settings: MailSettings | undefined; source: MailSource } {
    const a = this.active(owner);
    return { settings: a.list[0], source: a.source };
  }

  /** The API view of the owner's active settings (never the password). */
  view(owner: MailOwner): MailSettingsView {
    const a = this.active(owner);
    const v = viewOf(a.list[0], a.source);
    if (a.source === 'database' && a.passwordError) v.hasPassword = true;
    return v;
  }

  /** True when the owner has active settings that are enabled. */
  configuredFor(owner: MailOwner): boolean {
    const s = this.active(owner).list[0];
    return s !== undefined && s.enabled && s.host !== '';
  }

  /** The owner's alert recipients; empty when its mail is off. */
  recipientsFor(owner: MailOwner): string[] {
    return this.configuredFor(owner) ? [...this.active(owner).list[0]!.to] : [];
  }

  configured(): boolean {
    return this.configuredFor(SYSTEM_MAIL);
  }

  alertRecipients(): string[] {
    return this.recipientsFor(SYSTEM_MAIL);
  }

  /**
   * Validates and stores the owner's new settings as a plan; they apply to the next message. An
   * omitted or empty password keeps the stored one only for the same host, port and username
   * (`sameRelay`): a changed relay never gets the old credentials. Returns the new view, or the
   * list of problems (nothing stored). Errors: 409 from the store (id taken by another owner).
   */
  put(owner: MailOwner, input: MailSettingsInput): MailSettingsView | string[] {
    const cur = this.active(owner);
    const stored = cur.source === 'database' ? cur.list[0] : undefined;
    const next = settingsFromInput(input, stored);
    if (Array.isArray(next)) return next;
    const same = stored !== undefined && sameRelay(next, stored);
    // a stored password this node cannot open stays as it is for the same relay (another key may read it)
    const keepSealed = !input.password && same && cur.source === 'database' && cur.passwordError !== undefined;
    this.opts.store.save(owner, next, keepSealed);
    const hadPassword = stored !== undefined && (stored.password !== '' || (cur.source === 'database' && cur.passwordError !== undefined));
    const credentials = input.password ? 'replaced' : hadPassword ? (same ? 'kept' : 'dropped') : 'none';
    this.opts.log.info({ owner: ownerKey(owner), host: next.host, port: next.port, enabled: next.enabled, credentials }, 'mail settings stored');
    return this.view(owner);
  }

  /**
   * Deletes the owner's row. For the server-wide owner, mail is then off until the next restart
   * (the file does not apply again before that).
   */
  clear(owner: MailOwner): void {
    this.opts.store.clear(owner);
    if (owner.scope === 'system') this.systemCleared = true;
    this.opts.log.info({ owner: ownerKey(owner) }, owner.scope === 'system' ? 'mail settings cleared; mail is off until the next restart' : 'mail settings cleared');
  }

  /** Notes a plan from any origin (config sync too): a deleted `mail:system` row turns server-wide mail off until restart. */
  planApplied(plan: Plan): void {
    if (plan.changes.some((c) => c.op === 'delete' && c.kind === MAIL_KIND && c.id === SYSTEM_MAIL_ID)) this.systemCleared = true;
  }

  /** Sends through the server-wide settings (password reset, system alerts). */
  send(msg: MailMessage): Promise<{ accepted: string[]; response: string }> {
    return this.sendAs(SYSTEM_MAIL, msg);
  }

  /** Sends through the owner's active settings; rejects when they are missing or switched off. */
  async sendAs(owner: MailOwner, msg: MailMessage): Promise<{ accepted: string[]; response: string }> {
    const a = this.active(owner);
    const s = a.list[0];
    if (!s || !s.enabled || s.host === '') {
      throw new Error(s ? 'mail is switched off (enabled=false in the mail settings)'
        : owner.scope === 'system' ? 'mail is not configured: set alerts.smtp in the file or PUT /api/v1/settings/smtp' : 'mail is not configured for this tenant: PUT /api/v1/settings/smtp');
    }
    const r = await this.deliver(a, msg);
    return { accepted: r.accepted, response: r.response };
  }

  /**
   * Sends `msg` with the owner's saved settings even when they are switched off (so an operator
   * can check them before enabling). Throws with the server's error detail.
   */
  async sendTest(owner: MailOwner, msg: MailMessage): Promise<SendResult> {
    const a = this.active(owner);
    if (a.list.length === 0) throw new Error(owner.scope === 'system' ? 'no mail settings: PUT /api/v1/settings/smtp or set alerts.smtp in the file' : 'no mail settings: PUT /api/v1/settings/smtp');
    return this.deliver(a, msg);
  }

  /** The owner's mailer as a MailPort; one object per owner (the server-wide one is this service). */
  mailer(owner: MailOwner): MailPort {
    if (owner.scope === 'system') return this;
    const key = ownerKey(owner);
    let m = this.mailers.get(key);
    if (!m) {
      m = { scope: key, send: (msg) => this.sendAs(owner, msg), configured: () => this.configuredFor(owner), alertRecipients: () => this.recipientsFor(owner) };
      this.mailers.set(key, m);
    }
    return m;
  }

  /**
   * The mailer for health alerts of a pool: its tenant's own, the server-wide one for the operator
   * tenant. A pool this node does not know (deleted meanwhile) alerts server-wide: the operator may
   * see every tenant's pools, another tenant may not.
   */
  forPool(poolId: string): MailPort {
    const tenant = this.opts.tenantOfPool?.(poolId);
    return this.mailer(tenant === undefined ? SYSTEM_MAIL : mailOwnerOf(tenant, this.operatorTenant));
  }

  /** The mailer of a tenant's own mail (form actions): the tenant's settings, the server-wide ones for the operator tenant. */
  forTenant(tenantId: string): MailPort {
    return this.mailer(mailOwnerOf(tenantId, this.operatorTenant));
  }

  /** Tries each relay of `a` in order; the first that takes the message wins. Throws the last error. */
  private async deliver(a: Active, msg: MailMessage): Promise<SendResult> {
    if (a.source === 'database' && a.passwordError) throw new Error(a.passwordError);
    const list = a.list;
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
        from: msg.fromName ? { name: msg.fromName, address: s.from || `gslbd@${hostname()}` } : s.from || `gslbd@${hostname()}`,
        to: msg.to, subject: msg.subject, text: msg.text, ...(msg.html ? { html: msg.html } : {}), ...(msg.replyTo ? { replyTo: msg.replyTo } : {}),
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
