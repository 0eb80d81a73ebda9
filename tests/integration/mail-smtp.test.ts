import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { openDatabase } from '../../runtime/store/db.js';
import { ResourceStore } from '../../core/store/resources.js';
import { emptySnapshot } from '../../core/snapshot/snapshot.js';
import { EventBus } from '../../core/events/bus.js';
import { SnapshotHolder, applyPlan } from '../../core/apply/apply.js';
import { MailService } from '../../runtime/mail/service.js';
import { MailSettingsStore } from '../../runtime/mail/settings-store.js';
import { createPasswordBox } from '../../runtime/mail/password-box.js';
import { SYSTEM_MAIL } from '../../runtime/mail/owner.js';
import type { MailSettingsInput } from '../../runtime/mail/settings.js';
import { makeSelfSignedCert, TestSmtp } from '../helpers/smtp.js';

const cert = makeSelfSignedCert();
const servers: TestSmtp[] = [];
const logLines: string[] = [];
const log = pino({ level: 'debug' }, new Writable({ write(c, _e, cb) { logLines.push(String(c)); cb(); } }));

async function server(opts: ConstructorParameters<typeof TestSmtp>[0]): Promise<TestSmtp> {
  const s = new TestSmtp(opts);
  await s.start();
  servers.push(s);
  return s;
}

/** A settings store over a fresh in-memory database and its own one write path. */
function memoryStore(): MailSettingsStore {
  const store = new ResourceStore(openDatabase(':memory:'));
  const holder = new SnapshotHolder(emptySnapshot());
  const bus = new EventBus();
  const core = { holder, apply: (p: Parameters<typeof applyPlan>[1]) => applyPlan({ store, holder, bus }, p), apiRevision: () => `api:${randomUUID()}` };
  return new MailSettingsStore(core, createPasswordBox(undefined), 'default');
}

/** A MailService over a fresh in-memory store, with the test CA trusted (or not). */
function mailer(input: MailSettingsInput, trustCa = true): MailService {
  const svc = new MailService({ store: memoryStore(), file: [], log, timeoutMs: 3000, ...(trustCa ? { tlsCa: cert.cert } : {}) });
  const v = svc.put(SYSTEM_MAIL, input);
  assert.ok(!Array.isArray(v), JSON.stringify(v));
  return svc;
}

const msg = { to: ['ops@example.test', 'oncall@example.test'], subject: 'Pool web: 10.0.0.1 DOWN', text: 'member 10.0.0.1 of pool web is unhealthy\n' };

let plain: TestSmtp, starttls: TestSmtp, implicit: TestSmtp, authed: TestSmtp;
before(async () => {
  plain = await server({});
  starttls = await server({ tls: cert });
  implicit = await server({ secure: true, tls: cert });
  authed = await server({ tls: cert, auth: { user: 'relay-user', pass: 'relay-pass-9' } });
});
after(async () => { for (const s of servers) await s.stop(); });

test('plain relay without auth: recipients, sender and content arrive', async () => {
  const svc = mailer({ host: '127.0.0.1', port: plain.port, from: 'gslbd@example.test', to: ['x@example.test'], startTls: false });
  const r = await svc.send(msg);
  assert.deepEqual(r.accepted, msg.to);
  assert.match(r.response, /^250 .*Queued as test-1/);
  const [m] = await plain.waitFor(1);
  assert.deepEqual(m!.rcptTo, msg.to);
  assert.equal(m!.mailFrom, 'gslbd@example.test');
  assert.equal(m!.subject, msg.subject);
  assert.equal(m!.text.trim(), msg.text.trim());
  assert.equal(m!.secure, false);
  assert.equal(m!.user, undefined);
});

test('STARTTLS with a self-signed certificate the client trusts', async () => {
  const svc = mailer({ host: '127.0.0.1', port: starttls.port, from: 'gslbd@example.test', startTls: true });
  await svc.send(msg);
  const [m] = await starttls.waitFor(1);
  assert.equal(m!.secure, true, 'upgraded before DATA');
  assert.deepEqual(m!.rcptTo, msg.to);
});

test('STARTTLS with a certificate the client does not trust fails with the detail', async () => {
  const svc = mailer({ host: '127.0.0.1', port: starttls.port, from: 'gslbd@example.test', startTls: true }, false);
  await assert.rejects(svc.send(msg), /self[- ]signed|certificate/i);
  assert.equal(starttls.messages.length, 1, 'nothing more was delivered');
});

test('implicit TLS (port-465 style)', async () => {
  const svc = mailer({ host: '127.0.0.1', port: implicit.port, from: 'gslbd@example.test', tls: true });
  await svc.send(msg);
  const [m] = await implicit.waitFor(1);
  assert.equal(m!.secure, true);
});

test('AUTH over STARTTLS with the right password; a wrong one gives the server reply, never the password', async () => {
  const ok = mailer({ host: '127.0.0.1', port: authed.port, from: 'gslbd@example.test', username: 'relay-user', password: 'relay-pass-9' });
  await ok.send(msg);
  const [m] = await authed.waitFor(1);
  assert.equal(m!.user, 'relay-user');
  assert.equal(m!.secure, true);
  const bad = mailer({ host: '127.0.0.1', port: authed.port, from: 'gslbd@example.test', username: 'relay-user', password: 'wrong-pass-77' });
  await assert.rejects(bad.send(msg), (e: Error) => /EAUTH/.test(e.message) && /Invalid username or password/.test(e.message) && !e.message.includes('wrong-pass-77'));
  assert.ok(!logLines.join('').includes('wrong-pass-77'));
  assert.ok(!logLines.join('').includes('relay-pass-9'));
});

test('credentials are never sent to a server that offers no STARTTLS', async () => {
  const svc = mailer({ host: '127.0.0.1', port: plain.port, from: 'gslbd@example.test', username: 'u', password: 'p', startTls: true });
  const before = plain.messages.length;
  await assert.rejects(svc.send(msg), /STARTTLS|TLS/i);
  assert.equal(plain.messages.length, before);
});

test('enabled=false switches sending off but the test message still uses the saved settings', async () => {
  const svc = mailer({ host: '127.0.0.1', port: plain.port, from: 'gslbd@example.test', to: ['a@example.test'], startTls: false, enabled: false });
  assert.equal(svc.configured(), false);
  assert.deepEqual(svc.alertRecipients(), []);
  await assert.rejects(svc.send(msg), /switched off/);
  const before = plain.messages.length;
  const r = await svc.sendTest(SYSTEM_MAIL, { to: ['t@example.test'], subject: 'test', text: 'hi' });
  assert.deepEqual(r.accepted, ['t@example.test']);
  await plain.waitFor(before + 1);
});

test('file relays are tried in order: an unreachable first relay falls back to the next', async () => {
  const file = [
    { host: '127.0.0.1', port: 1, from: 'a@example.test', to: ['first@example.test'], username: '', password: '', tls: false, startTls: false, enabled: true },
    { host: '127.0.0.1', port: plain.port, from: 'a@example.test', to: ['second@example.test'], username: '', password: '', tls: false, startTls: false, enabled: true },
  ];
  const svc = new MailService({ store: memoryStore(), file, log, timeoutMs: 3000 });
  assert.equal(svc.view(SYSTEM_MAIL).source, 'file');
  assert.deepEqual(svc.alertRecipients(), ['first@example.test']);
  const before = plain.messages.length;
  await svc.send({ to: ['x@example.test'], subject: 's', text: 't' });
  await plain.waitFor(before + 1);
});

test('a message the server refuses fails with the server reply', async () => {
  const refusing = await server({ rejectData: 'Message rejected by policy' });
  const svc = mailer({ host: '127.0.0.1', port: refusing.port, from: 'gslbd@example.test', startTls: false });
  await assert.rejects(svc.send(msg), (e: Error) => /554/.test(e.message) && /rejected by policy/.test(e.message));
  assert.equal(refusing.messages.length, 0);
});
