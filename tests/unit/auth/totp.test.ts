import { test } from 'node:test';
import assert from 'node:assert/strict';
import { matchTotp, newTotpSecret, totpCode } from '../../../runtime/auth/totp.js';

test('newTotpSecret gives a base32 secret, an otpauth URI and a PNG data URL', async () => {
  const t = await newTotpSecret('a@example.test');
  assert.match(t.secret, /^[A-Z2-7]{32}$/);
  assert.match(t.otpauthUrl, /^otpauth:\/\/totp\/gslbd:a%40example\.test\?secret=/);
  assert.ok(t.qrPng.startsWith('data:image/png;base64,'));
  const png = Buffer.from(t.qrPng.split(',')[1]!, 'base64');
  assert.deepEqual([...png.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
});

test('matchTotp allows one step of clock skew and returns the code\'s step', async () => {
  const { secret } = await newTotpSecret('a@example.test');
  const now = 1_700_000_015_000; // 15 s into a step
  const step = Math.floor(now / 30_000);
  const rows: { name: string; at: number; want: number | undefined }[] = [
    { name: 'current step', at: now, want: step },
    { name: 'one step behind', at: now - 30_000, want: step - 1 },
    { name: 'one step ahead', at: now + 30_000, want: step + 1 },
    { name: 'two steps behind is refused', at: now - 60_000, want: undefined },
    { name: 'two steps ahead is refused', at: now + 60_000, want: undefined },
  ];
  for (const r of rows) assert.equal(matchTotp(secret, totpCode(secret, r.at), now), r.want, r.name);
  assert.equal(matchTotp(secret, 'abcdef', now), undefined, 'not digits');
  assert.equal(matchTotp(secret, '12345', now), undefined, 'too short');
});
