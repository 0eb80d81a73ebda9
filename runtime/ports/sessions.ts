/**
 * Storage interfaces for authentication state that the cluster part moves into NATS KV
 * (`SVC_SESSIONS`). The memory implementations are the single-node fallback: per node, lost on
 * restart (gslb-config-auth.md §2 "User and session").
 */

/** A session record stored under the SHA-256 hex of its token. */
export interface SessionRecord {
  userId: string;
  tenantId: string;
  role: string;
  createdAt: number;
  /** ms timestamp after which the session is invalid */
  expiresAt: number;
}

export interface SessionStore {
  get(tokenHash: string): Promise<SessionRecord | undefined>;
  put(tokenHash: string, rec: SessionRecord): Promise<void>;
  delete(tokenHash: string): Promise<void>;
  /** deletes every session of a user (password change, user deleted) */
  deleteUser(userId: string): Promise<void>;
}

/** Single-use values with a lifetime (OIDC state nonces, password-reset tokens). */
export interface NonceStore {
  put(key: string, value: string, ttlMs: number): Promise<void>;
  /** returns the value and deletes it in one step; undefined when absent or expired */
  take(key: string): Promise<string | undefined>;
}

export class MemorySessionStore implements SessionStore {
  private readonly m = new Map<string, SessionRecord>();
  constructor(private readonly now: () => number = Date.now) {}
  async get(h: string) {
    const r = this.m.get(h);
    if (r && r.expiresAt <= this.now()) { this.m.delete(h); return undefined; }
    return r;
  }
  async put(h: string, rec: SessionRecord) { this.m.set(h, rec); }
  async delete(h: string) { this.m.delete(h); }
  async deleteUser(userId: string) { for (const [h, r] of this.m) if (r.userId === userId) this.m.delete(h); }
}

export class MemoryNonceStore implements NonceStore {
  private readonly m = new Map<string, { value: string; expiresAt: number }>();
  constructor(private readonly now: () => number = Date.now) {}
  async put(key: string, value: string, ttlMs: number) {
    for (const [k, v] of this.m) if (v.expiresAt <= this.now()) this.m.delete(k);
    this.m.set(key, { value, expiresAt: this.now() + ttlMs });
  }
  async take(key: string) {
    const v = this.m.get(key);
    this.m.delete(key);
    return v && v.expiresAt > this.now() ? v.value : undefined;
  }
}
