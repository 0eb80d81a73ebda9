import { randomBytes } from 'node:crypto';
import type { SessionStore } from '../ports/sessions.js';
import type { UserRecord, UserStore } from './user-store.js';
import { hashToken } from './tenant-store.js';

/** A live session resolved from a token, with the user as stored now. */
export interface ActiveSession { user: UserRecord; expiresAt: number }

/**
 * Session tokens (gslb-config-auth.md §2 and §5.8): 32 random bytes, base64url, stored only under
 * the SHA-256 hex of the token in the shared SessionStore. With `extend`, every authenticated
 * request moves the expiry to now + ttl (written at most once per `min(60 s, ttl/100)` to spare
 * the store). A session whose user is gone is invalid; the role is read from the user row, so a
 * role change applies at once.
 */
export class SessionService {
  constructor(
    /** read on every call: the cluster part may swap the store after the auth part is set up */
    private readonly storeOf: () => SessionStore,
    private readonly users: UserStore,
    private readonly ttlMs: number,
    private readonly extend: boolean,
    private readonly now: () => number = Date.now,
  ) {}

  /** Creates a session; returns the raw token (shown once to the client) and the expiry in ms. */
  async create(user: UserRecord): Promise<{ token: string; expiresAt: number }> {
    const token = randomBytes(32).toString('base64url');
    const t = this.now();
    const expiresAt = t + this.ttlMs;
    await this.storeOf().put(hashToken(token), { userId: user.id, tenantId: user.tenantId, role: user.role, createdAt: t, expiresAt });
    return { token, expiresAt };
  }

  /** The session for a token, extended when sliding; undefined when unknown, expired or orphaned. */
  async resolve(token: string): Promise<ActiveSession | undefined> {
    const h = hashToken(token);
    const rec = await this.storeOf().get(h);
    const t = this.now();
    if (!rec) return undefined;
    if (rec.expiresAt <= t) { await this.storeOf().delete(h); return undefined; }
    // An unknown user refuses the session but does not delete it: in a cluster the user's row may
    // not have reached this node yet (config sync), and the store is shared by every node. A
    // deleted user's sessions are revoked by the delete itself; expiry collects the rest.
    const user = this.users.byId(rec.userId);
    if (!user) return undefined;
    let expiresAt = rec.expiresAt;
    if (this.extend) {
      const next = t + this.ttlMs;
      if (next - rec.expiresAt >= Math.min(60_000, this.ttlMs / 100)) {
        expiresAt = next;
        await this.storeOf().put(h, { ...rec, role: user.role, expiresAt });
      }
    }
    return { user, expiresAt };
  }

  /** Revokes one session at once. */
  revoke(token: string): Promise<void> {
    return this.storeOf().delete(hashToken(token));
  }

  /** Revokes every session of a user (deleted, password reset). */
  revokeUser(userId: string): Promise<void> {
    return this.storeOf().deleteUser(userId);
  }
}
