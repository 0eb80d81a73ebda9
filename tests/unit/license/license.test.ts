import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT, jwtVerify } from 'jose';
import { evaluateLicense, issueLicense, licenseAt, tierAtLeast, type LicenseState } from '../../../runtime/license/license.js';

const SECRET = 'license-secret-0123456789abcdef0123456789';
const OTHER = 'another-secret-0123456789abcdef0123456789';
const NOW = Date.UTC(2026, 4, 1, 12, 0, 0);
const s = (ms: number) => Math.floor(ms / 1000);
const DAY = 86_400_000;

/** A token signed with `secret` carrying exactly `claims` (HS256 unless `alg` says otherwise). */
async function token(claims: Record<string, unknown>, secret = SECRET, alg = 'HS256'): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg }).sign(new TextEncoder().encode(secret));
}

test('evaluateLicense: one row per case', async () => {
  const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ tier: 'pro', sub: 'Acme', exp: s(NOW + DAY) })).toString('base64url')}.`;
  const rows: { name: string; given: { secret?: string; token?: string }; want: Partial<LicenseState> }[] = [
    { name: 'valid pro', given: { secret: SECRET, token: await token({ tier: 'pro', sub: 'Acme', exp: s(NOW + DAY) }) },
      want: { status: 'valid', tier: 'pro', licensedTier: 'pro', licensee: 'Acme', expiresAt: s(NOW + DAY), reason: null } },
    { name: 'valid enterprise', given: { secret: SECRET, token: await token({ tier: 'enterprise', sub: 'Big', exp: s(NOW + DAY) }) },
      want: { status: 'valid', tier: 'enterprise' } },
    { name: 'expired', given: { secret: SECRET, token: await token({ tier: 'pro', sub: 'Acme', exp: s(NOW - DAY) }) },
      want: { status: 'expired', tier: 'free', licensedTier: 'pro', licensee: 'Acme', expiresAt: s(NOW - DAY), reason: `the license expired at ${new Date(s(NOW - DAY) * 1000).toISOString()}` } },
    { name: 'wrong secret', given: { secret: OTHER, token: await token({ tier: 'pro', sub: 'Acme', exp: s(NOW + DAY) }) },
      want: { status: 'invalid', tier: 'free', licensedTier: null, licensee: null, expiresAt: null, reason: 'the signature does not verify with the signing secret' } },
    { name: 'garbage', given: { secret: SECRET, token: 'not-a-token' }, want: { status: 'invalid', tier: 'free', reason: 'the license key is not a signed license token' } },
    { name: 'unsigned (alg none)', given: { secret: SECRET, token: unsigned }, want: { status: 'invalid', tier: 'free' } },
    { name: 'another algorithm (HS512)', given: { secret: SECRET, token: await token({ tier: 'pro', sub: 'Acme', exp: s(NOW + DAY) }, SECRET, 'HS512') },
      want: { status: 'invalid', tier: 'free', reason: 'the token is not signed with HS256' } },
    { name: 'missing tier', given: { secret: SECRET, token: await token({ sub: 'Acme', exp: s(NOW + DAY) }) },
      want: { status: 'invalid', tier: 'free', reason: 'the tier claim is missing; must be one of free, pro, enterprise' } },
    { name: 'unknown tier', given: { secret: SECRET, token: await token({ tier: 'platinum', sub: 'Acme', exp: s(NOW + DAY) }) },
      want: { status: 'invalid', tier: 'free', reason: 'the tier claim is "platinum"; must be one of free, pro, enterprise' } },
    { name: 'missing licensee', given: { secret: SECRET, token: await token({ tier: 'pro', exp: s(NOW + DAY) }) },
      want: { status: 'invalid', reason: 'the sub claim (the licensee) is missing' } },
    { name: 'missing expiry', given: { secret: SECRET, token: await token({ tier: 'pro', sub: 'Acme' }) }, want: { status: 'invalid', tier: 'free', reason: 'the exp claim is missing' } },
    { name: 'not valid yet', given: { secret: SECRET, token: await token({ tier: 'pro', sub: 'Acme', nbf: s(NOW + DAY), exp: s(NOW + 2 * DAY) }) },
      want: { status: 'invalid', reason: 'the license is not valid yet (nbf)' } },
    { name: 'none', given: {}, want: { status: 'none', tier: 'free', licensee: null, reason: 'no license key: set license.licenseKey or GSLB_LICENSE_KEY' } },
    { name: 'a secret but no key', given: { secret: SECRET }, want: { status: 'none', tier: 'free' } },
    { name: 'a key but no secret', given: { token: await token({ tier: 'pro', sub: 'Acme', exp: s(NOW + DAY) }) },
      want: { status: 'invalid', tier: 'free', reason: 'the license key cannot be verified: no signing secret: set license.secret or GSLB_LICENSE_SECRET' } },
    { name: 'a short secret', given: { secret: 'short-secret', token: await token({ tier: 'pro', sub: 'Acme', exp: s(NOW + DAY) }, 'short-secret') },
      want: { status: 'invalid', tier: 'free', reason: 'the license key cannot be verified: the signing secret is shorter than 32 characters (e.g. openssl rand -hex 32)' } },
  ];
  for (const r of rows) {
    const got = await evaluateLicense(r.given, NOW);
    for (const [k, v] of Object.entries(r.want)) assert.deepEqual(got[k as keyof LicenseState], v, `${r.name}: ${k} (${JSON.stringify(got)})`);
    // no reason or field ever carries the token or the secret
    const text = JSON.stringify(got);
    for (const secret of [r.given.secret, r.given.token]) if (secret) assert.ok(!text.includes(secret), `${r.name} leaks a secret`);
  }
});

test('licenseAt: a valid license turns expired at exp, without verifying again', async () => {
  const exp = s(NOW) + 60;
  const state = await evaluateLicense({ secret: SECRET, token: await token({ tier: 'pro', sub: 'Acme', exp }) }, NOW);
  assert.equal(licenseAt(state, NOW + 59_000).status, 'valid');
  const later = licenseAt(state, exp * 1000);
  assert.deepEqual([later.status, later.tier, later.licensedTier, later.licensee], ['expired', 'free', 'pro', 'Acme']);
  const none = await evaluateLicense({}, NOW);
  assert.equal(licenseAt(none, NOW + DAY), none);
});

test('tierAtLeast orders free < pro < enterprise', () => {
  const rows: [string, string, boolean][] = [['free', 'free', true], ['free', 'pro', false], ['pro', 'pro', true], ['pro', 'enterprise', false], ['enterprise', 'pro', true]];
  for (const [have, min, want] of rows) assert.equal(tierAtLeast(have as never, min as never), want, `${have} >= ${min}`);
});

test('issueLicense signs HS256 with tier, sub, iat, exp; its output evaluates as valid; bad input is refused', async () => {
  const exp = s(NOW + 30 * DAY);
  const t = await issueLicense({ tier: 'pro', licensee: 'Acme GmbH', expiresAt: exp }, SECRET, NOW);
  const { payload, protectedHeader } = await jwtVerify(t, new TextEncoder().encode(SECRET), { currentDate: new Date(NOW) });
  assert.deepEqual(protectedHeader, { alg: 'HS256', typ: 'JWT' });
  assert.deepEqual(payload, { tier: 'pro', sub: 'Acme GmbH', iat: s(NOW), exp });
  assert.equal((await evaluateLicense({ secret: SECRET, token: t }, NOW)).status, 'valid');
  const bad: [Parameters<typeof issueLicense>[0], string | undefined, RegExp][] = [
    [{ tier: 'pro', licensee: 'A', expiresAt: exp }, undefined, /no signing secret/],
    [{ tier: 'pro', licensee: 'A', expiresAt: exp }, 'short', /shorter than 32/],
    [{ tier: 'gold', licensee: 'A', expiresAt: exp }, SECRET, /tier "gold": must be one of free, pro, enterprise/],
    [{ tier: 'pro', licensee: ' ', expiresAt: exp }, SECRET, /licensee is empty/],
    [{ tier: 'pro', licensee: 'A', expiresAt: s(NOW) }, SECRET, /not in the future/],
  ];
  for (const [claims, secret, want] of bad) await assert.rejects(issueLicense(claims, secret, NOW), want);
});
