import bcrypt from 'bcrypt';
import { badRequest } from '../errors.js';

/** A bcrypt hash of a fixed string, compared when the account does not exist so timing does not tell. */
let dummyHash: Promise<string> | undefined;

/** Hashes a password with bcrypt at `cost` (auth.bcryptCost, 10..14). */
export function hashPassword(password: string, cost: number): Promise<string> {
  return bcrypt.hash(password, cost);
}

/** Compares a password with a hash; with no hash, spends the same time and returns false. */
export async function verifyPassword(password: string, hash: string | null, cost: number): Promise<boolean> {
  if (!hash) {
    dummyHash ??= bcrypt.hash('gslbd-no-such-user', cost);
    await bcrypt.compare(password, await dummyHash);
    return false;
  }
  return bcrypt.compare(password, hash);
}

/**
 * Password rules: 8 to 256 characters (bcrypt reads only the first 72 bytes). Throws 400.
 * Characters are code points, as the request schemas' `minLength` and `maxLength` count them
 * (schemas/api-auth.v1.schema.json), so a password the document allows is never refused here.
 */
export function checkPasswordRules(password: unknown): string {
  const length = typeof password === 'string' ? [...password].length : 0;
  if (typeof password !== 'string' || length < 8) throw badRequest('password must be at least 8 characters');
  if (length > 256) throw badRequest('password must be at most 256 characters');
  return password;
}

/** Loose e-mail shape check (one @, a dot in the domain). Throws 400. */
export function checkEmail(email: unknown): string {
  if (typeof email !== 'string' || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email.trim()) || email.length > 254) throw badRequest('email must be an e-mail address');
  return email.trim();
}
