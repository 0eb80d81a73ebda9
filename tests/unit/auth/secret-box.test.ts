import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { SecretBox } from '../../../runtime/auth/secret-box.js';

test('SecretBox seals with AES-256-GCM and refuses tampering or another key', () => {
  const box = new SecretBox(randomBytes(32).toString('hex'));
  const sealed = box.seal('JBSWY3DPEHPK3PXP');
  assert.ok(!sealed.includes('JBSWY3DPEHPK3PXP'));
  assert.notEqual(box.seal('JBSWY3DPEHPK3PXP'), sealed, 'fresh IV each time');
  assert.equal(box.open(sealed), 'JBSWY3DPEHPK3PXP');
  const parts = sealed.split(':');
  const ct = Buffer.from(parts[3]!, 'base64url');
  ct[0] ^= 1;
  assert.throws(() => box.open([parts[0], parts[1], parts[2], ct.toString('base64url')].join(':')));
  assert.throws(() => new SecretBox(randomBytes(32).toString('hex')).open(sealed));
});

test('SecretBox refuses keys that are not 64 hex characters', () => {
  for (const k of ['', 'abc', 'z'.repeat(64), randomBytes(16).toString('hex')]) assert.throws(() => new SecretBox(k), /64 hex/, k);
});
