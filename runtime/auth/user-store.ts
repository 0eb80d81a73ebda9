import { randomUUID } from 'node:crypto';
import type { Db } from '../store/db.js';
import type { Role } from './permissions.js';
import { DEFAULT_TENANT } from '../model/types.js';

/** A user row as the auth part uses it (secrets stay inside; `publicUser` strips them). */
export interface UserRecord {
  id: string;
  tenantId: string;
  email: string;
  displayName: string;
  role: Role;
  passwordHash: string | null;
  authProvider: 'password' | 'oidc';
  /** encrypted TOTP secret once verified (see secret-box.ts) */
  totpSecret: string | null;
  /** encrypted secret between /auth/totp/setup and /auth/totp/verify */
  totpPending: string | null;
  totpLastStep: number;
  createdAt: number;
  updatedAt: number;
}

/** The user object the API returns: never a hash or a secret. */
export interface PublicUser {
  userId: string;
  email: string;
  displayName: string;
  role: Role;
  tenantId: string;
  auth_provider: 'password' | 'oidc';
  totpEnabled: boolean;
  createdAt: number;
  updatedAt: number;
}

interface UserRowSql {
  id: string; tenant_id: string; email: string; display_name: string; role: Role; password_hash: string | null;
  auth_provider: 'password' | 'oidc'; totp_secret: string | null; totp_pending: string | null; totp_last_step: number;
  created_at: number; updated_at: number;
}

const fromSql = (r: UserRowSql): UserRecord => ({
  id: r.id, tenantId: r.tenant_id, email: r.email, displayName: r.display_name, role: r.role,
  passwordHash: r.password_hash, authProvider: r.auth_provider, totpSecret: r.totp_secret, totpPending: r.totp_pending,
  totpLastStep: r.totp_last_step, createdAt: r.created_at, updatedAt: r.updated_at,
});

/** Strips secrets; timestamps in Unix seconds. */
export function publicUser(u: UserRecord): PublicUser {
  return {
    userId: u.id, email: u.email, displayName: u.displayName, role: u.role, tenantId: u.tenantId,
    auth_provider: u.authProvider, totpEnabled: u.totpSecret !== null,
    createdAt: Math.floor(u.createdAt / 1000), updatedAt: Math.floor(u.updatedAt / 1000),
  };
}

/** Fields needed to create a user. */
export interface NewUser {
  tenantId?: string;
  email: string;
  displayName?: string;
  role: Role;
  passwordHash: string | null;
  authProvider?: 'password' | 'oidc';
}

/**
 * SQL access to users and tenants. Synchronous (better-sqlite3); e-mail lookups are
 * case-insensitive. Throws SQLite constraint errors for a duplicate e-mail (callers map them to 409).
 */
export class UserStore {
  constructor(private readonly db: Db, private readonly now: () => number = Date.now) {}

  /** Number of users in all tenants. */
  count(): number {
    return (this.db.prepare('SELECT count(*) AS n FROM users').get() as { n: number }).n;
  }

  /** Number of users with an active TOTP secret. */
  countTotp(): number {
    return (this.db.prepare('SELECT count(*) AS n FROM users WHERE totp_secret IS NOT NULL').get() as { n: number }).n;
  }

  byId(id: string): UserRecord | undefined {
    const r = this.db.prepare('SELECT * FROM users WHERE id = ?').get(id) as UserRowSql | undefined;
    return r && fromSql(r);
  }

  byEmail(email: string): UserRecord | undefined {
    const r = this.db.prepare('SELECT * FROM users WHERE email = ?').get(email.trim()) as UserRowSql | undefined;
    return r && fromSql(r);
  }

  /** Users of one tenant, or of all tenants when `tenantId` is null. */
  list(tenantId: string | null): UserRecord[] {
    const rows = tenantId === null
      ? this.db.prepare('SELECT * FROM users ORDER BY created_at, email').all()
      : this.db.prepare('SELECT * FROM users WHERE tenant_id = ? ORDER BY created_at, email').all(tenantId);
    return (rows as UserRowSql[]).map(fromSql);
  }

  /** Inserts a user and returns it. */
  create(u: NewUser): UserRecord {
    const t = this.now();
    const id = randomUUID();
    this.db.prepare(`INSERT INTO users (id, tenant_id, email, display_name, role, password_hash, auth_provider, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(id, u.tenantId ?? DEFAULT_TENANT, u.email.trim(), u.displayName ?? '', u.role,
      u.passwordHash, u.authProvider ?? 'password', t, t);
    return this.byId(id)!;
  }

  /** Creates the user only while no user exists (setup, --create-admin); undefined otherwise. */
  createFirst(u: NewUser): UserRecord | undefined {
    return this.db.transaction(() => (this.count() === 0 ? this.create(u) : undefined))();
  }

  /** Updates the given fields. */
  update(id: string, patch: Partial<Pick<UserRecord, 'displayName' | 'role' | 'passwordHash' | 'totpSecret' | 'totpPending' | 'totpLastStep'>>): UserRecord | undefined {
    const cols: Record<string, string> = {
      displayName: 'display_name', role: 'role', passwordHash: 'password_hash', totpSecret: 'totp_secret',
      totpPending: 'totp_pending', totpLastStep: 'totp_last_step',
    };
    const sets: string[] = [];
    const vals: unknown[] = [];
    for (const [k, v] of Object.entries(patch)) {
      if (v === undefined) continue;
      sets.push(`${cols[k]} = ?`);
      vals.push(v);
    }
    sets.push('updated_at = ?');
    vals.push(this.now());
    this.db.prepare(`UPDATE users SET ${sets.join(', ')} WHERE id = ?`).run(...vals, id);
    return this.byId(id);
  }

  /**
   * Records `step` as the last TOTP step used, only when it is newer than the stored one. Returns
   * false when the step was already used (a replayed code).
   */
  useTotpStep(id: string, step: number): boolean {
    return this.db.prepare('UPDATE users SET totp_last_step = ? WHERE id = ? AND totp_last_step < ?').run(step, id, step).changes === 1;
  }

  delete(id: string): boolean {
    return this.db.prepare('DELETE FROM users WHERE id = ?').run(id).changes === 1;
  }
}
