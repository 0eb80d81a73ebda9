import type { Core } from '../app.js';
import { MailTemplates } from './templates.js';

/** Options of a password-reset message. */
export interface PasswordResetOptions {
  /** shown in the greeting when known */
  displayName?: string;
  /** how long the link works, shown in the text; default 60 */
  expiresInMinutes?: number;
}

/**
 * Renders the `password-reset` template (built-in, or the operator's file in
 * `alerts.mailTemplatesDir`) and sends it to `to` through core.mail (the server-wide settings, never
 * a tenant's), read at call time so the installed mailer is used. Resolves with the server's answer; rejects when mail is not
 * configured or switched off, when a template is broken, or with the SMTP error. Never logs `link`.
 */
export async function sendPasswordReset(core: Core, to: string, link: string, opts: PasswordResetOptions = {}): Promise<{ accepted: string[]; response: string }> {
  const templates = new MailTemplates(core.config.alerts.mailTemplatesDir);
  const body = await templates.render('password-reset', {
    email: to, link, displayName: opts.displayName ?? '', expiresInMinutes: opts.expiresInMinutes ?? 60, node: core.config.node.id,
  });
  return core.mail.send({ to: [to], ...body });
}
