import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSecretBox } from '../../../runtime/mail/secret-box.js';

const KEY = 'a'.repeat(64);
const OTHER = 'b'.repeat(64);

test('with a key: sealed values are AES-GCM, not the clear text, and open back', () => {
  const box = createSecretBox(KEY);
  const a = box.seal('hunter2');
  const b = box.seal('hunter2');
  assert.match(a, /^gcm1:/);
  assert.ok(!a.includes('hunter2'));
  assert.notEqual(a, b, 'fresh IV per value');
  assert.equal(box.open(a), 'hunter2');
});

test('a different key, a tampered value, or no key cannot open a sealed value', () => {
  const sealed = createSecretBox(KEY).seal('hunter2');
  assert.throws(() => createSecretBox(OTHER).open(sealed), /GSLB_SECRET_KEY differs/);
  const parts = sealed.split(':');
  const ct = Buffer.from(parts[3]!, 'base64');
  ct[0] = ct[0]! ^ 1;
  assert.throws(() => createSecretBox(KEY).open([...parts.slice(0, 3), ct.toString('base64')].join(':')));
  assert.throws(() => createSecretBox(undefined).open(sealed), /GSLB_SECRET_KEY is not set/);
});

test('without a key values are kept plain and stay readable once a key is set', () => {
  const plain = createSecretBox(undefined).seal('pw');
  assert.equal(plain, 'plain:pw');
  assert.equal(createSecretBox(KEY).open(plain), 'pw');
});

test('a malformed key is refused', () => {
  for (const k of ['abc', 'g'.repeat(64), 'a'.repeat(63)]) assert.throws(() => createSecretBox(k), /64 hex/, k);
});
