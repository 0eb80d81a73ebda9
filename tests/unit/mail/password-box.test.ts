import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPasswordBox } from '../../../runtime/mail/password-box.js';
import { SecretBox } from '../../../runtime/crypto/secret-box.js';

const KEY = 'a'.repeat(64);
const OTHER = 'b'.repeat(64);

test('with a key: sealed values are AES-GCM v2, not the clear text, and open back', () => {
  const box = createPasswordBox(KEY);
  const a = box.seal('hunter2');
  const b = box.seal('hunter2');
  assert.equal(box.encrypting, true);
  assert.match(a, /^v2:/);
  assert.ok(!a.includes('hunter2'));
  assert.notEqual(a, b, 'fresh IV per value');
  assert.equal(box.open(a), 'hunter2');
});

test('a different key, a tampered value, or no key cannot open a sealed value', () => {
  const sealed = createPasswordBox(KEY).seal('hunter2');
  assert.throws(() => createPasswordBox(OTHER).open(sealed), /GSLB_SECRET_KEY differs/);
  const parts = sealed.split(':');
  const ct = Buffer.from(parts[3]!, 'base64url');
  ct[0] = ct[0]! ^ 1;
  assert.throws(() => createPasswordBox(KEY).open([...parts.slice(0, 3), ct.toString('base64url')].join(':')), /cannot be decrypted/);
  assert.throws(() => createPasswordBox(undefined).open(sealed), /GSLB_SECRET_KEY is not set/);
});

test('a TOTP secret sealed under the same key is not accepted as the SMTP password', () => {
  const totp = new SecretBox(KEY).seal('JBSWY3DPEHPK3PXP', 'totp');
  assert.throws(() => createPasswordBox(KEY).open(totp), /cannot be decrypted/);
});

test('a password stored by the former mail helper (gcm1) still opens', () => {
  // sealed by the gcm1 code under '5e' x 32 before the shared SecretBox existed
  assert.equal(createPasswordBox('5e'.repeat(32)).open('gcm1:gn+B7QxVyvTcDsjr:jWMYFruV86toyAJZx9eetA==:DgTt/GsJIQ=='), 'hunter2');
});

test('without a key values are kept plain and stay readable once a key is set', () => {
  const box = createPasswordBox(undefined);
  assert.equal(box.encrypting, false);
  const plain = box.seal('pw');
  assert.equal(plain, 'plain:pw');
  assert.equal(createPasswordBox(KEY).open(plain), 'pw');
});

test('a malformed key is refused', () => {
  for (const k of ['abc', 'g'.repeat(64), 'a'.repeat(63)]) assert.throws(() => createPasswordBox(k), /64 hex/, k);
});
