import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { SecretBox, type SecretPurpose } from '../../../runtime/crypto/secret-box.js';

const KEY = '5e'.repeat(32);
const OTHER = randomBytes(32).toString('hex');

// Written by the two former helpers under KEY (TOTP: `v1`, no AAD; SMTP: `gcm1`, base64): the
// stored values of existing installations, which must keep opening without a migration.
const LEGACY_TOTP = 'v1:pLYPnf4Z4C_V-WBN:CqNacmfjCtfklND9l6jkeQ:V8GQTCyUZkEEcy7QkIbQVA';
const LEGACY_SMTP = 'gcm1:gn+B7QxVyvTcDsjr:jWMYFruV86toyAJZx9eetA==:DgTt/GsJIQ==';

test('seal writes v2 AES-256-GCM with a fresh IV, and open gives the text back', () => {
  const box = new SecretBox(KEY);
  const sealed = box.seal('JBSWY3DPEHPK3PXP', 'totp');
  assert.match(sealed, /^v2:[\w-]+:[\w-]+:[\w-]+$/);
  assert.ok(!sealed.includes('JBSWY3DPEHPK3PXP'));
  assert.notEqual(box.seal('JBSWY3DPEHPK3PXP', 'totp'), sealed, 'fresh IV each time');
  assert.equal(box.open(sealed, 'totp'), 'JBSWY3DPEHPK3PXP');
});

// Each row: a stored value, the purpose it is opened for, and the clear text or the refusal.
const cases: { name: string; sealed: () => string; purpose: SecretPurpose; want: string | RegExp }[] = [
  { name: 'v2 totp as totp', sealed: () => new SecretBox(KEY).seal('s1', 'totp'), purpose: 'totp', want: 's1' },
  { name: 'v2 smtp-password as smtp-password', sealed: () => new SecretBox(KEY).seal('pw', 'smtp-password'), purpose: 'smtp-password', want: 'pw' },
  { name: 'v2 totp replayed as smtp-password', sealed: () => new SecretBox(KEY).seal('s1', 'totp'), purpose: 'smtp-password', want: /authenticate/ },
  { name: 'v2 smtp-password replayed as totp', sealed: () => new SecretBox(KEY).seal('pw', 'smtp-password'), purpose: 'totp', want: /authenticate/ },
  { name: 'v2 under another key', sealed: () => new SecretBox(OTHER).seal('s1', 'totp'), purpose: 'totp', want: /authenticate/ },
  { name: 'legacy v1 TOTP secret', sealed: () => LEGACY_TOTP, purpose: 'totp', want: 'JBSWY3DPEHPK3PXP' },
  { name: 'legacy v1 replayed as smtp-password', sealed: () => LEGACY_TOTP, purpose: 'smtp-password', want: /cannot be opened as smtp-password/ },
  { name: 'legacy gcm1 SMTP password', sealed: () => LEGACY_SMTP, purpose: 'smtp-password', want: 'hunter2' },
  { name: 'legacy gcm1 replayed as totp', sealed: () => LEGACY_SMTP, purpose: 'totp', want: /cannot be opened as totp/ },
  { name: 'unknown format', sealed: () => 'v9:a:b:c', purpose: 'totp', want: /unknown format/ },
  { name: 'prototype key as format', sealed: () => '__proto__:a:b:c', purpose: 'totp', want: /unknown format/ },
  { name: 'missing parts', sealed: () => 'v2:abc', purpose: 'totp', want: /unknown format/ },
];
for (const c of cases) {
  test(`open: ${c.name}`, () => {
    const box = new SecretBox(KEY);
    if (typeof c.want === 'string') assert.equal(box.open(c.sealed(), c.purpose), c.want);
    else assert.throws(() => box.open(c.sealed(), c.purpose), c.want);
  });
}

test('a tampered ciphertext, IV or tag does not open', () => {
  const box = new SecretBox(KEY);
  const parts = box.seal('JBSWY3DPEHPK3PXP', 'totp').split(':');
  for (const i of [1, 2, 3]) {
    const bytes = Buffer.from(parts[i]!, 'base64url');
    bytes[0] = bytes[0]! ^ 1;
    const altered = parts.map((p, j) => (j === i ? bytes.toString('base64url') : p)).join(':');
    assert.throws(() => box.open(altered, 'totp'), Error, `part ${i}`);
  }
});

test('keys that are not 64 hex characters are refused', () => {
  for (const k of ['', 'abc', 'z'.repeat(64), 'a'.repeat(63), randomBytes(16).toString('hex')]) {
    assert.throws(() => new SecretBox(k), /64 hex/, k);
  }
});
