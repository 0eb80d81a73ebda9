import { authenticator } from 'otplib';
import QRCode from 'qrcode';

/** TOTP per RFC 6238: 30 s steps, 6 digits, SHA-1, one step of clock tolerance either side. */
const STEP_MS = 30_000;

/** A new base32 secret with its otpauth URI and a QR code PNG as a data URL. */
export async function newTotpSecret(account: string, issuer = 'gslbd'): Promise<{ secret: string; otpauthUrl: string; qrPng: string }> {
  const secret = authenticator.generateSecret(20);
  const otpauthUrl = authenticator.keyuri(account, issuer, secret);
  const qrPng = await QRCode.toDataURL(otpauthUrl, { type: 'image/png', margin: 2, width: 240 });
  return { secret, otpauthUrl, qrPng };
}

/**
 * Checks a code against a secret at time `now` with one step of tolerance. Returns the absolute
 * time step the code belongs to (so callers can refuse a replay within that step), or undefined
 * when the code is wrong.
 */
export function matchTotp(secret: string, code: string, now: number = Date.now()): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const a = authenticator.clone({ window: 1, epoch: now });
  let delta: number | null;
  try { delta = a.checkDelta(code, secret); } catch { return undefined; }
  if (delta === null) return undefined;
  return Math.floor(now / STEP_MS) + delta;
}

/** The code for a secret at time `now` (tests and the enrolment check). */
export function totpCode(secret: string, now: number = Date.now()): string {
  return authenticator.clone({ epoch: now }).generate(secret);
}
