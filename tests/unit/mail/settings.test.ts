import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fromFileItem, isMailAddress, settingsFromInput, viewOf, type MailSettings } from '../../../runtime/mail/settings.js';

const stored: MailSettings = { host: 'old', port: 25, from: 'a@b.c', to: [], username: 'u', password: 'kept', tls: false, startTls: true, enabled: true };

test('settingsFromInput: defaults, password keeping, problems', () => {
  const rows: { name: string; given: Parameters<typeof settingsFromInput>[0]; want: Partial<MailSettings> | RegExp }[] = [
    { name: 'defaults to STARTTLS on 587', given: { host: 'smtp.example.test' }, want: { port: 587, startTls: true, tls: false, enabled: true } },
    { name: 'tls defaults to 465 without STARTTLS', given: { host: 'h', tls: true }, want: { port: 465, startTls: false, tls: true } },
    { name: 'same relay, password omitted: kept', given: { host: 'old', port: 25, username: 'u' }, want: { password: 'kept' } },
    { name: 'same relay, empty password: kept', given: { host: 'old', port: 25, username: 'u', password: '' }, want: { password: 'kept' } },
    { name: 'host differs only in case: kept', given: { host: 'OLD', port: 25, username: 'u' }, want: { password: 'kept' } },
    { name: 'other host: dropped', given: { host: 'attacker.example', port: 25, username: 'u' }, want: { password: '' } },
    { name: 'other port: dropped', given: { host: 'old', port: 2525, username: 'u' }, want: { password: '' } },
    { name: 'port default differs from the stored one: dropped', given: { host: 'old', username: 'u' }, want: { port: 587, password: '' } },
    { name: 'other username: dropped', given: { host: 'old', port: 25, username: 'v' }, want: { password: '' } },
    { name: 'other host with its own password', given: { host: 'new', port: 25, username: 'u', password: 'new' }, want: { password: 'new' } },
    { name: 'new password replaces', given: { host: 'old', port: 25, username: 'u', password: 'new' }, want: { password: 'new' } },
    { name: 'switch off keeps the rest', given: { host: 'h', enabled: false, to: ['ops@example.test'] }, want: { enabled: false, to: ['ops@example.test'] } },
    { name: 'both TLS modes', given: { host: 'h', tls: true, startTls: true }, want: /cannot both be true/ },
    { name: 'bad recipient', given: { host: 'h', to: ['nope'] }, want: /"nope" is not a mail address/ },
    { name: 'bad sender', given: { host: 'h', from: 'x y' }, want: /from/ },
  ];
  for (const r of rows) {
    const out = settingsFromInput(r.given, stored);
    if (r.want instanceof RegExp) {
      assert.ok(Array.isArray(out), r.name);
      assert.match((out as string[]).join('; '), r.want, r.name);
    } else {
      assert.ok(!Array.isArray(out), r.name);
      for (const [k, v] of Object.entries(r.want)) assert.deepEqual((out as unknown as Record<string, unknown>)[k], v, `${r.name}: ${k}`);
    }
  }
});

test('viewOf never carries the password', () => {
  const v = viewOf(stored, 'database');
  assert.equal('password' in v, false);
  assert.equal(v.hasPassword, true);
  assert.equal(v.source, 'database');
  assert.equal(viewOf(undefined, 'none').source, 'none');
  assert.equal(viewOf({ ...stored, password: '' }, 'file').hasPassword, false);
});

test('file items are enabled; tls wins over the startTls default', () => {
  const s = fromFileItem({ host: 'h', port: 465, to: ['a@b.c'], startTls: true, tls: true });
  assert.deepEqual([s.enabled, s.tls, s.startTls], [true, true, false]);
});

test('isMailAddress', () => {
  for (const [a, want] of [['a@b.c', true], ['Ops Team <ops@example.test>', true], ['nope', false], ['a b@c.d', false]] as const) assert.equal(isMailAddress(a), want, a);
});
