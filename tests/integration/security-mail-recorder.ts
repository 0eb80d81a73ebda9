import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { parseMail, type ReceivedMail } from '../helpers/smtp.js';

/** One AUTH attempt as the server received it. */
export interface AuthAttempt { user: string; pass: string }

/**
 * A real smtp-server on a loopback address, port 0, that records every AUTH attempt (accepted or
 * not) with the credentials sent, and every accepted message. Plain SMTP with AUTH allowed on it,
 * so the security tests can see exactly which credentials reached which relay. With `accept`,
 * only those credentials pass and a message needs them; without it, AUTH is optional and every
 * attempt is refused.
 */
export class RecordingRelay {
  readonly auths: AuthAttempt[] = [];
  readonly messages: (ReceivedMail & { rcptTo: string[] })[] = [];
  port = 0;
  private readonly server: SMTPServer;

  constructor(private readonly opts: { accept?: AuthAttempt; host?: string } = {}) {
    this.server = new SMTPServer({
      secure: false,
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      authOptional: !opts.accept,
      logger: false,
      disableReverseLookup: true,
      onAuth: (auth, _session, cb) => {
        const attempt = { user: auth.username ?? '', pass: auth.password ?? '' };
        this.auths.push(attempt);
        if (opts.accept && attempt.user === opts.accept.user && attempt.pass === opts.accept.pass) return cb(null, { user: attempt.user });
        cb(new Error('Invalid username or password'));
      },
      onData: (stream, session, cb) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          this.messages.push({
            mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            rcptTo: session.envelope.rcptTo.map((r) => r.address), secure: session.secure, user: session.user, raw, ...parseMail(raw),
          });
          cb(null, 'Queued');
        });
      },
    });
  }

  /** The address the relay listens on (127.0.0.1 unless another loopback address was given). */
  get host(): string {
    return this.opts.host ?? '127.0.0.1';
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, this.host, () => resolve());
    });
    this.port = (this.server.server.address() as AddressInfo).port;
    return this;
  }

  /** Resolves once at least `n` messages arrived; rejects after `timeoutMs` (polls every 20 ms). */
  async waitFor(n: number, timeoutMs = 5000): Promise<ReceivedMail[]> {
    for (const deadline = Date.now() + timeoutMs; this.messages.length < n;) {
      if (Date.now() > deadline) throw new Error(`relay ${this.host}:${this.port}: wanted ${n} messages, got ${this.messages.length}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.messages;
  }

  /** Every password this relay was offered. */
  passwords(): string[] {
    return this.auths.map((a) => a.pass);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
