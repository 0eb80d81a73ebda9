/** An outbound message. */
export interface MailMessage {
  to: string[];
  subject: string;
  text: string;
  html?: string;
  /** the Reply-To address (form actions: the visitor's address) */
  replyTo?: string;
  /** a display name for the settings' From address (form autoreplies) */
  fromName?: string;
}

/**
 * How other parts send mail. `core.mail` is the server-wide mailer (password reset, GitOps
 * alerts, health alerts of the operator tenant's pools); the mail part replaces the default, which
 * refuses because nothing is configured. `send` resolves with the server's answer.
 */
export interface MailPort {
  /** whose settings this mailer uses: `system` or `tenant:<id>` (alert lanes, logs); absent: `system` */
  readonly scope?: string;
  send(msg: MailMessage): Promise<{ accepted: string[]; response: string }>;
  /** true when active settings exist and are enabled */
  configured(): boolean;
  /**
   * The `to` list of the active settings (where alerts go); empty when mail is off. Optional so
   * that test doubles of the port stay valid.
   */
  alertRecipients?(): string[];
  /**
   * The mailer for health alerts of a pool: its tenant's own settings, or the server-wide ones for
   * the operator tenant's pools (docs/alerts.md). Never another tenant's. The same object is
   * returned for the same owner, so callers may group by it. Optional for test doubles; without
   * it every alert uses this port.
   */
  forPool?(poolId: string): MailPort;
  /** The mailer of a tenant's own mail (form actions): its settings, the server-wide ones for the operator tenant. Optional for test doubles. */
  forTenant?(tenantId: string): MailPort;
}

/** The default port: every send is refused because nothing is configured. */
export const NO_MAIL: MailPort = {
  send: async () => { throw new Error('mail is not configured: set alerts.smtp in the file or PUT /api/v1/settings/smtp'); },
  configured: () => false,
  alertRecipients: () => [],
};
