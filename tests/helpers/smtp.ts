import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { shown, WAIT_CEILING_MS } from './wait.js';

/** A message the test SMTP server accepted, with the MIME parts decoded. */
export interface ReceivedMail {
  mailFrom: string;
  rcptTo: string[];
  /** TLS was in use (implicit or after STARTTLS) */
  secure: boolean;
  /** the authenticated user, if any */
  user: string | undefined;
  headers: Record<string, string>;
  subject: string;
  text: string;
  html: string | undefined;
  raw: string;
}

/** How a TestSmtp server behaves: TLS mode, required credentials, a forced DATA failure. */
export interface TestSmtpOptions {
  /** implicit TLS (port-465 style) with `tls` */
  secure?: boolean;
  /** key and certificate (PEM); with `secure` false this enables STARTTLS */
  tls?: { key: string; cert: string };
  /** require AUTH with these credentials */
  auth?: { user: string; pass: string };
  /** answer DATA with this error instead of accepting */
  rejectData?: string;
}

/** A self-signed certificate for 127.0.0.1 and localhost, made with openssl in a temp dir. */
export function makeSelfSignedCert(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-cert-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
      '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' });
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function decodeQp(s: string): string {
  const bytes: number[] = [];
  const t = s.replace(/=\r?\n/g, '');
  for (let i = 0; i < t.length; i++) {
    if (t[i] === '=' && /^[0-9A-F]{2}$/i.test(t.slice(i + 1, i + 3))) { bytes.push(parseInt(t.slice(i + 1, i + 3), 16)); i += 2; }
    else bytes.push(...Buffer.from(t[i]!, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

function decodeWords(s: string): string {
  return s.replace(/=\?([^?]+)\?([QB])\?([^?]*)\?=\s*/gi, (_m, _cs, enc: string, data: string) =>
    enc.toUpperCase() === 'B' ? Buffer.from(data, 'base64').toString('utf8') : decodeQp(data.replace(/_/g, ' ')));
}

function parsePart(raw: string): { headers: Record<string, string>; body: string } {
  const sep = raw.search(/\r?\n\r?\n/);
  const head = sep < 0 ? raw : raw.slice(0, sep);
  const body = sep < 0 ? '' : raw.slice(sep).replace(/^\r?\n\r?\n/, '');
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
  }
  return { headers, body };
}

function decodeBody(headers: Record<string, string>, body: string): string {
  const enc = (headers['content-transfer-encoding'] ?? '').toLowerCase();
  if (enc === 'quoted-printable') return decodeQp(body);
  if (enc === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body;
}

/** Splits a raw message into subject, text and html (handles multipart/alternative). */
export function parseMail(raw: string): Pick<ReceivedMail, 'headers' | 'subject' | 'text' | 'html'> {
  const top = parsePart(raw);
  let text = '';
  let html: string | undefined;
  const ct = top.headers['content-type'] ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(ct)?.[1];
  if (boundary) {
    for (const chunk of top.body.split(`--${boundary}`).slice(1)) {
      if (chunk.startsWith('--')) break;
      const p = parsePart(chunk.replace(/^\r?\n/, ''));
      const pct = p.headers['content-type'] ?? '';
      if (pct.startsWith('text/plain')) text = decodeBody(p.headers, p.body);
      else if (pct.startsWith('text/html')) html = decodeBody(p.headers, p.body);
    }
  } else if (ct.startsWith('text/html')) html = decodeBody(top.headers, top.body);
  else text = decodeBody(top.headers, top.body);
  return { headers: top.headers, subject: decodeWords(top.headers.subject ?? ''), text: text.replace(/\r\n/g, '\n'), html };
}

/** A real smtp-server on 127.0.0.1, port 0, keeping every accepted message. */
export class TestSmtp {
  readonly messages: ReceivedMail[] = [];
  port = 0;
  private server: SMTPServer;
  private waiters: (() => void)[] = [];

  constructor(opts: TestSmtpOptions = {}) {
    const disabled: string[] = [];
    if (!opts.auth) disabled.push('AUTH');
    if (!opts.tls) disabled.push('STARTTLS');
    this.server = new SMTPServer({
      secure: opts.secure ?? false,
      ...(opts.tls ? { key: opts.tls.key, cert: opts.tls.cert } : {}),
      disabledCommands: disabled,
      authOptional: !opts.auth,
      logger: false,
      disableReverseLookup: true,
      onAuth: (auth, _session, cb) => {
        if (opts.auth && auth.username === opts.auth.user && auth.password === opts.auth.pass) return cb(null, { user: auth.username });
        cb(new Error('Invalid username or password'));
      },
      onData: (stream, session, cb) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          if (opts.rejectData) return cb(Object.assign(new Error(opts.rejectData), { responseCode: 554 }));
          const raw = Buffer.concat(chunks).toString('utf8');
          this.messages.push({
            mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            rcptTo: session.envelope.rcptTo.map((r) => r.address),
            secure: session.secure, user: session.user, raw, ...parseMail(raw),
          });
          for (const w of this.waiters.splice(0)) w();
          cb(null, 'Queued as test-1');
        });
      },
    });
  }

  /** Starts listening; resolves with the port. */
  async start(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.server.address() as AddressInfo).port;
    return this.port;
  }

  /**
   * Resolves once at least `n` messages arrived; rejects after `timeoutMs` (raised to
   * WAIT_CEILING_MS) naming the subjects of those that did.
   */
  async waitFor(n: number, timeoutMs = WAIT_CEILING_MS): Promise<ReceivedMail[]> {
    const deadline = Date.now() + Math.max(timeoutMs, WAIT_CEILING_MS);
    while (this.messages.length < n) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`smtp: wanted ${n} messages, got ${this.messages.length}: ${shown(this.messages.map((m) => m.subject))}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => { clearTimeout(t); resolve(); });
      });
    }
    return this.messages;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
