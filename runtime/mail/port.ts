// What other features may use of the mail feature: the templates' types (alert targets render
// through them), the owner of a pool's alert mail, and the password-reset message. The mailer
// itself is the core's `mail` (runtime/ports/mail.ts).
export type { MailTemplates, RenderedMail, TemplateName } from './templates.js';
export { SYSTEM_MAIL } from './owner.js';
export type { MailService } from './service.js';
export { sendPasswordReset } from './reset.js';
