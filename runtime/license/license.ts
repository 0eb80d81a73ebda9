import { SignJWT, errors, jwtVerify, type JWTPayload } from 'jose';

/** License tiers, lowest first. RUM needs `pro` or above (gslb-api.md §7). */
export const TIERS = ['free', 'pro', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];

/** `valid`: verified and not expired; `expired`: verified but past `exp`; `invalid`: not usable; `none`: no license key. */
export type LicenseStatus = 'valid' | 'expired' | 'invalid' | 'none';

/**
 * A license as evaluated: never the token or the secret. `tier` is the tier in force (the
 * licensed one while valid, else `free`); `licensedTier`, `licensee` and `expiresAt` (Unix
 * seconds) are what a verified token says, expired ones included, null otherwise.
 */
export interface LicenseState {
  status: LicenseStatus;
  tier: Tier;
  licensedTier: Tier | null;
  licensee: string | null;
  expiresAt: number | null;
  reason: string | null;
}

/** The shortest signing secret accepted (HS256 wants at least the hash's 32 bytes; RFC 7518 §3.2). */
export const MIN_SECRET_LENGTH = 32;
const ALG = 'HS256';

/** True when `have` is `min` or a higher tier. */
export function tierAtLeast(have: Tier, min: Tier): boolean {
  return TIERS.indexOf(have) >= TIERS.indexOf(min);
}

const isTier = (v: unknown): v is Tier => typeof v === 'string' && (TIERS as readonly string[]).includes(v);
const keyOf = (secret: string) => new TextEncoder().encode(secret);
const iso = (unixS: number) => new Date(unixS * 1000).toISOString();
const free = (status: LicenseStatus, reason: string | null): LicenseState => ({ status, tier: 'free', licensedTier: null, licensee: null, expiresAt: null, reason });

/** Why a signing secret cannot be used, or undefined when it can. */
export function secretProblem(secret: string | undefined): string | undefined {
  if (!secret) return 'no signing secret: set license.secret or GSLB_LICENSE_SECRET';
  if (secret.length < MIN_SECRET_LENGTH) return `the signing secret is shorter than ${MIN_SECRET_LENGTH} characters (e.g. openssl rand -hex 32)`;
  return undefined;
}

/** The claims a verified token must carry, or the reason it does not. */
function claimsOf(p: JWTPayload): { tier: Tier; licensee: string; exp: number } | string {
  if (!isTier(p.tier)) return `the tier claim is ${p.tier === undefined ? 'missing' : `"${String(p.tier)}"`}; must be one of ${TIERS.join(', ')}`;
  if (typeof p.sub !== 'string' || p.sub === '') return 'the sub claim (the licensee) is missing';
  if (typeof p.exp !== 'number') return 'the exp claim (the expiry) is missing';
  return { tier: p.tier, licensee: p.sub, exp: p.exp };
}

/**
 * Evaluates a license token (a JWT signed with HS256 under the signing secret, claims `tier`,
 * `sub` = licensee, `exp`) at `now` (ms). Never throws: a missing, malformed, wrongly signed or
 * incomplete token is `invalid`, a verified one past `exp` is `expired`; both mean the free tier.
 * Reasons never quote the token or the secret.
 */
export async function evaluateLicense(input: { secret?: string; token?: string }, now = Date.now()): Promise<LicenseState> {
  if (!input.token) return free('none', 'no license key: set license.licenseKey or GSLB_LICENSE_KEY');
  const bad = secretProblem(input.secret);
  if (bad) return free('invalid', `the license key cannot be verified: ${bad}`);
  let payload: JWTPayload;
  let expired = false;
  try {
    ({ payload } = await jwtVerify(input.token, keyOf(input.secret!), { algorithms: [ALG], requiredClaims: ['exp'], currentDate: new Date(now) }));
  } catch (err) {
    if (err instanceof errors.JWTExpired) {
      payload = err.payload;
      expired = true;
    } else {
      return free('invalid', reasonOf(err));
    }
  }
  const c = claimsOf(payload);
  if (typeof c === 'string') return free('invalid', c);
  const base = { licensedTier: c.tier, licensee: c.licensee, expiresAt: c.exp };
  if (expired || c.exp * 1000 <= now) return { ...base, status: 'expired', tier: 'free', reason: `the license expired at ${iso(c.exp)}` };
  return { ...base, status: 'valid', tier: c.tier, reason: null };
}

function reasonOf(err: unknown): string {
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'the signature does not verify with the signing secret';
  if (err instanceof errors.JOSEAlgNotAllowed) return `the token is not signed with ${ALG}`;
  if (err instanceof errors.JWTClaimValidationFailed) return err.claim === 'nbf' ? 'the license is not valid yet (nbf)' : `the ${err.claim} claim is ${err.reason}`;
  if (err instanceof errors.JOSEError) return 'the license key is not a signed license token';
  return `the license key cannot be read: ${(err as Error).message}`;
}

/**
 * The state at a later moment, without verifying again: a `valid` license whose `exp` has passed
 * becomes `expired` (free tier). Exact at every call, so `hasTier` needs no timer.
 */
export function licenseAt(state: LicenseState, now = Date.now()): LicenseState {
  if (state.status !== 'valid' || state.expiresAt === null || state.expiresAt * 1000 > now) return state;
  return { ...state, status: 'expired', tier: 'free', reason: `the license expired at ${iso(state.expiresAt)}` };
}

/**
 * Signs a license token for `gslbctl license issue`: HS256 under `secret`, claims `tier`, `sub`
 * (the licensee), `iat`, `exp` (Unix seconds). Errors: a secret that is missing or too short, an
 * unknown tier, an empty licensee, an expiry not in the future.
 */
export async function issueLicense(claims: { tier: string; licensee: string; expiresAt: number }, secret: string | undefined, now = Date.now()): Promise<string> {
  const bad = secretProblem(secret);
  if (bad) throw new Error(bad);
  if (!isTier(claims.tier)) throw new Error(`tier "${claims.tier}": must be one of ${TIERS.join(', ')}`);
  if (!claims.licensee.trim()) throw new Error('the licensee is empty');
  if (claims.expiresAt * 1000 <= now) throw new Error(`the expiry ${iso(claims.expiresAt)} is not in the future`);
  return new SignJWT({ tier: claims.tier })
    .setProtectedHeader({ alg: ALG, typ: 'JWT' })
    .setSubject(claims.licensee)
    .setIssuedAt(Math.floor(now / 1000))
    .setExpirationTime(claims.expiresAt)
    .sign(keyOf(secret!));
}
