import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { honeypotReason } from '../../../runtime/forms/intake/spam/honeypot.js';
import { countLinks, linksReason } from '../../../runtime/forms/intake/spam/links.js';
import { emailsOf, primaryEmail } from '../../../runtime/forms/intake/spam/emails.js';
import { DisposableDomains, disposableReason } from '../../../runtime/forms/intake/spam/disposable.js';
import { emailRateReason } from '../../../runtime/forms/intake/spam/email-rate.js';
import { blockedIpReason, compileBlockList } from '../../../runtime/forms/intake/spam/blocked-ips.js';
import { cachedBlockLists, checkSpam, type SpamContext } from '../../../runtime/forms/intake/spam/pipeline.js';
import { DEFAULT_SETTINGS } from '../../../runtime/forms/forms/settings.js';

test('honeypot: any non-blank value in the field, in any of its values', () => {
  assert.equal(honeypotReason({ a: '1' }, 'fc_honeypot'), null);
  assert.equal(honeypotReason({ fc_honeypot: '  ' }, 'fc_honeypot'), null);
  assert.equal(honeypotReason({ fc_honeypot: 'x' }, 'fc_honeypot'), 'honeypot field filled');
  assert.equal(honeypotReason({ trap: ['', 'y'] }, 'trap'), 'honeypot field filled');
});

const LINKS: [Record<string, string | string[]>, number][] = [
  [{ m: 'no links here' }, 0],
  [{ m: 'https://a.example and http://b.example/x?y=1' }, 2],
  [{ m: 'www.a.example', n: ['www.b.example/path', 'nothing'] }, 2],
  [{ m: 'see https://www.a.example' }, 1],
  [{ m: '[url=https://a.example]https://a.example[/url]' }, 1],
  [{ m: 'mail me: a@www.example' }, 0],
];
for (const [fields, n] of LINKS) test(`countLinks(${JSON.stringify(fields)}) = ${n}`, () => assert.equal(countLinks(fields), n));

test('max_links: 0 is off; exactly at the limit passes; one over is spam', () => {
  const two = { m: 'https://a.example https://b.example' };
  assert.equal(linksReason(two, 0), null);
  assert.equal(linksReason(two, 2), null);
  assert.equal(linksReason(two, 1), '2 links (at most 1 allowed)');
});

test('emailsOf: schema email fields and address-like names; lower-cased, unique, only real-looking addresses', () => {
  const fields = { contact: 'Zed@Example.com', email: ['a@example.com', 'not an address'], work_email: 'A@example.com', _replyto: 'r@example.org', name: 'x@example.net' };
  assert.deepEqual(emailsOf(fields, ['contact']), ['zed@example.com', 'a@example.com', 'r@example.org']);
  assert.equal(primaryEmail({ name: 'x' }, []), null);
  assert.deepEqual(emailsOf({ email: `${'a'.repeat(250)}@example.com` }, []), [], 'longer than 254 characters');
});

test('disposable domains: the package list, parents of listed domains, the operator file adding and removing', () => {
  const list = DisposableDomains.load();
  assert.ok(list.size > 1000, `${list.size} domains`);
  assert.equal(list.has('mailinator.com'), true);
  assert.equal(list.has('x.y.Mailinator.COM'), true);
  assert.equal(list.has('example.com'), false);
  assert.equal(disposableReason(['a@example.com', 'b@x.mailinator.com'], list), 'disposable e-mail address (x.mailinator.com)');
  assert.equal(disposableReason(['a@example.com'], list), null);
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-disposable-'));
  try {
    const file = join(dir, 'extra.txt');
    writeFileSync(file, '# extra\nours.test   # trailing comment\n\n!mailinator.com\n');
    const custom = DisposableDomains.load(file);
    assert.equal(custom.has('ours.test'), true);
    assert.equal(custom.has('mailinator.com'), false);
    assert.equal(custom.size, list.size);
    assert.throws(() => DisposableDomains.load(join(dir, 'missing.txt')), /forms\.spam\.disposableDomainsFile .*missing\.txt: no such file/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('max_per_email_per_hour: 0 is off; under the limit passes; at it, this post is one too many', () => {
  assert.equal(emailRateReason(50, 0), null);
  assert.equal(emailRateReason(1, 2), null);
  assert.equal(emailRateReason(2, 2), '3 submissions from this address in the last hour (at most 2 allowed)');
});

test('blocked_ips: addresses and ranges, IPv6, IPv4-mapped IPv6', () => {
  const list = compileBlockList(['192.0.2.1', '198.51.100.0/24', '2001:db8::/32', '::ffff:203.0.113.5']);
  assert.equal(blockedIpReason('192.0.2.1', list), 'address 192.0.2.1 is blocked (192.0.2.1)');
  assert.equal(blockedIpReason('192.0.2.2', list), null);
  assert.equal(blockedIpReason('198.51.100.200', list), 'address 198.51.100.200 is blocked (198.51.100.0/24)');
  assert.equal(blockedIpReason('::ffff:198.51.100.7', list), 'address 198.51.100.7 is blocked (198.51.100.0/24)');
  assert.equal(blockedIpReason('2001:db8:1::5', list), 'address 2001:db8:1::5 is blocked (2001:db8::/32)');
  assert.equal(blockedIpReason('203.0.113.5', list), 'address 203.0.113.5 is blocked (::ffff:203.0.113.5)');
  assert.equal(blockedIpReason('2001:db9::1', list), null);
  assert.equal(blockedIpReason('not-an-ip', list), null);
});

test('pipeline: the first defence that objects wins; reCAPTCHA is never asked when a synchronous check already found spam', async () => {
  let asked = 0;
  const ctx = (over: Partial<SpamContext['settings']>, fields: Record<string, string> = {}): SpamContext => ({
    fields, ip: '192.0.2.1', settings: { ...DEFAULT_SETTINGS, ...over }, emails: ['a@mailinator.com'], emailsThisHour: () => { asked++; return 10; },
  });
  const deps = { disposable: DisposableDomains.load(), recaptcha: null, blockList: cachedBlockLists() };
  const all = { blocked_ips: ['192.0.2.0/24'], max_links: 1, block_disposable_emails: true, max_per_email_per_hour: 1, recaptcha_min_score: 0.5 };
  assert.deepEqual(await checkSpam(ctx(all, { fc_honeypot: 'x', m: 'https://a https://b' }), deps), { spam: true, reason: 'honeypot field filled' });
  assert.deepEqual(await checkSpam(ctx(all, { m: 'https://a.example https://b.example' }), deps), { spam: true, reason: 'address 192.0.2.1 is blocked (192.0.2.0/24)' });
  assert.deepEqual(await checkSpam(ctx({ ...all, blocked_ips: [] }, { m: 'https://a.example https://b.example' }), deps), { spam: true, reason: '2 links (at most 1 allowed)' });
  assert.deepEqual(await checkSpam(ctx({ ...all, blocked_ips: [] }), deps), { spam: true, reason: 'disposable e-mail address (mailinator.com)' });
  assert.equal(asked, 0, 'the per-address count is read only when needed');
  assert.deepEqual(await checkSpam(ctx({ ...all, blocked_ips: [], block_disposable_emails: false }), deps), { spam: true, reason: '11 submissions from this address in the last hour (at most 1 allowed)' });
  assert.deepEqual(await checkSpam(ctx({ recaptcha_min_score: 0.5 }), deps), { spam: true, reason: 'recaptcha is not configured on this server (forms.recaptcha)' });
  assert.deepEqual(await checkSpam(ctx({}), deps), { spam: false });
  const lists = cachedBlockLists();
  const entries = ['10.0.0.0/8'];
  assert.equal(lists(entries), lists(entries), 'a list compiles once');
});
