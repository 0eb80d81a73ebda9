/** An outbound message. */
export interface MailMessage {
  to: string[];
  subject: string;
  text: string;
  html?: string;
}

/**
 * How other parts send mail (password reset, health alerts). The mail part replaces the default,
 * which refuses because nothing is configured. `send` resolves with the server's answer.
 */
export interface MailPort {
  send(msg: MailMessage): Promise<{ accepted: string[]; response: string }>;
  /** true when active settings exist and are enabled */
  configured(): boolean;
  /**
   * The `to` list of the active settings (where health and GitOps alerts go); empty when mail is
   * off. Optional so that test doubles of the port stay valid.
   */
  alertRecipients?(): string[];
}

/** The default port: every send is refused because nothing is configured. */
export const NO_MAIL: MailPort = {
  send: async () => { throw new Error('mail is not configured: set alerts.smtp in the file or PUT /api/v1/settings/smtp'); },
  configured: () => false,
  alertRecipients: () => [],
};
