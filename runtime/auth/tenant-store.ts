import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Db } from '../store/db.js';

/** A tenant. */
export interface Tenant { id: string; name: string; createdAt: number }

/** A legacy per-tenant API key as listed (the key itself is shown once, at creation). */
export interface TenantApiKey { id: string; tenantId: string; name: string; createdAt: number }

/** SHA-256 hex of a token: how sessions, API keys and reset tokens are looked up. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * Tenants and their legacy API keys (gslb-config-auth.md §5 step 4). Keys are stored as SHA-256
 * hex; lookups compare hashes, so the raw key never reaches the database.
 */
export class TenantStore {
  constructor(private readonly db: Db, private readonly now: () => number = Date.now) {}

  list(): Tenant[] {
    return (this.db.prepare('SELECT id, name, created_at FROM tenants ORDER BY id').all() as { id: string; name: string; created_at: number }[])
      .map((r) => ({ id: r.id, name: r.name, createdAt: Math.floor(r.created_at / 1000) }));
  }

  exists(id: string): boolean {
    return this.db.prepare('SELECT 1 FROM tenants WHERE id = ?').get(id) !== undefined;
  }

  /** Creates a tenant; false when the id is taken. */
  create(id: string, name: string): boolean {
    return this.db.prepare('INSERT OR IGNORE INTO tenants (id, name, created_at) VALUES (?, ?, ?)').run(id, name, this.now()).changes === 1;
  }

  /** Creates a key for the tenant and returns it with the raw key (never stored). */
  createKey(tenantId: string, name: string): TenantApiKey & { key: string } {
    const key = `gslbk_${randomBytes(32).toString('base64url')}`;
    const id = randomUUID();
    const t = this.now();
    this.db.prepare('INSERT INTO tenant_api_keys (id, tenant_id, name, key_hash, created_at) VALUES (?, ?, ?, ?, ?)').run(id, tenantId, name, hashToken(key), t);
    return { id, tenantId, name, createdAt: Math.floor(t / 1000), key };
  }

  listKeys(tenantId: string): TenantApiKey[] {
    return (this.db.prepare('SELECT id, tenant_id, name, created_at FROM tenant_api_keys WHERE tenant_id = ? ORDER BY created_at').all(tenantId) as
      { id: string; tenant_id: string; name: string; created_at: number }[])
      .map((r) => ({ id: r.id, tenantId: r.tenant_id, name: r.name, createdAt: Math.floor(r.created_at / 1000) }));
  }

  deleteKey(tenantId: string, id: string): boolean {
    return this.db.prepare('DELETE FROM tenant_api_keys WHERE tenant_id = ? AND id = ?').run(tenantId, id).changes === 1;
  }

  /** The tenant a raw key belongs to, or undefined. */
  tenantOfKey(key: string): string | undefined {
    const r = this.db.prepare('SELECT tenant_id FROM tenant_api_keys WHERE key_hash = ?').get(hashToken(key)) as { tenant_id: string } | undefined;
    return r?.tenant_id;
  }
}
