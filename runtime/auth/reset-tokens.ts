import { randomBytes } from 'node:crypto';
import type { NonceStore } from '../ports/sessions.js';
import { hashToken } from './tenant-store.js';

/** How long a password-reset token stays valid. */
export const RESET_TTL_MS = 30 * 60_000;

/**
 * Single-use password-reset tokens kept in the NonceStore under `reset:<sha256 hex>` (the raw
 * token exists only in the e-mail). `take` consumes it, so a second use fails.
 */
export class ResetTokens {
  constructor(private readonly nonces: () => NonceStore, private readonly ttlMs = RESET_TTL_MS) {}

  /** Issues a token for the user and returns the raw token. */
  async issue(userId: string): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await this.nonces().put(`reset:${hashToken(token)}`, userId, this.ttlMs);
    return token;
  }

  /** The user id a token was issued for, consuming it; undefined when unknown, used or expired. */
  consume(token: string): Promise<string | undefined> {
    return this.nonces().take(`reset:${hashToken(token)}`);
  }
}
