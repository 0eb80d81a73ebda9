import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { DEFAULT_TENANT, type GenericRow } from '../../core/model/types.js';
import { tableIndex } from '../../core/snapshot/table-index.js';
import { getRow, rowsOf, type Snapshot } from '../../core/snapshot/snapshot.js';
import { planCreate, planDelete } from '../../core/plan/delta.js';
import type { RowWriter } from '../app.js';

/** A tenant. */
export interface Tenant { id: string; name: string; createdAt: number }

/** A legacy per-tenant API key as listed (the key itself is shown once, at creation). */
export interface TenantApiKey { id: string; tenantId: string; name: string; createdAt: number }

/** A tenant row (kind `tenant`; its `tenantId` is its own id). Times in ms. */
export interface TenantRow extends GenericRow { kind: 'tenant'; name: string; createdAt: number }

/** A legacy tenant API key row (kind `apikey`, its tenant in `tenantId`): SHA-256 hex of the key only. */
export interface ApiKeyRow extends GenericRow { kind: 'apikey'; name: string; keyHash: string; createdAt: number }

/** SHA-256 hex of a token: how sessions, API keys and reset tokens are looked up. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * The `default` tenant is built in: it exists on every node without being a row (rows created by
 * supra-tenant callers, setup, --create-admin and single sign-on belong to it).
 */
const BUILT_IN_DEFAULT: Tenant = { id: DEFAULT_TENANT, name: DEFAULT_TENANT, createdAt: 0 };

const toTenant = (r: TenantRow): Tenant => ({ id: r.id, name: r.name, createdAt: Math.floor(r.createdAt / 1000) });
const toKey = (r: ApiKeyRow): TenantApiKey => ({ id: r.id, tenantId: r.tenantId, name: r.name, createdAt: Math.floor(r.createdAt / 1000) });

const byHashIndex = new WeakMap<object, Map<string, ApiKeyRow>>();
const hashIndex = (s: Snapshot) => tableIndex<ApiKeyRow>(s, 'apikey', byHashIndex, (k) => k.keyHash);

/**
 * Tenants and their legacy API keys (gslb-config-auth.md §5 step 4) as `tenant` and `apikey` rows:
 * read from the current Snapshot, written as one-row plans through `core.apply`, replicated by
 * config sync. Keys are stored as SHA-256 hex; lookups compare hashes, so the raw key never
 * reaches the database or the config stream.
 */
/** Tenant id that names server-wide rows; never a tenant. */
export const RESERVED_TENANT_ID = 'system';

export class TenantStore {
  constructor(private readonly core: RowWriter, private readonly now: () => number = Date.now) {}

  private get snap(): Snapshot {
    return this.core.holder.current;
  }

  /** Every tenant by id, the built-in `default` tenant included. */
  list(): Tenant[] {
    const out = [...rowsOf<TenantRow>(this.snap, 'tenant').values()].map(toTenant);
    if (!out.some((t) => t.id === DEFAULT_TENANT)) out.push(BUILT_IN_DEFAULT);
    return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  exists(id: string): boolean {
    return id === DEFAULT_TENANT || getRow(this.snap, 'tenant', id) !== undefined;
  }

  /**
   * Creates a tenant through a one-row plan; false when the id is taken. `default` always is, and
   * so is `system`, which names the server-wide rows (`mail:system`): no tenant may share it.
   */
  create(id: string, name: string): boolean {
    if (this.exists(id) || id === RESERVED_TENANT_ID) return false;
    const row: TenantRow = { kind: 'tenant', id, tenantId: id, origin: 'api', revision: '', name, createdAt: this.now() };
    this.core.apply(planCreate(this.snap, row, this.core.apiRevision()));
    return true;
  }

  /** Creates a key for the tenant and returns it with the raw key (never stored). */
  createKey(tenantId: string, name: string): TenantApiKey & { key: string } {
    const key = `gslbk_${randomBytes(32).toString('base64url')}`;
    const row: ApiKeyRow = { kind: 'apikey', id: randomUUID(), tenantId, origin: 'api', revision: '', name, keyHash: hashToken(key), createdAt: this.now() };
    this.core.apply(planCreate(this.snap, row, this.core.apiRevision()));
    return { ...toKey(row), key };
  }

  /** Keys of one tenant, oldest first. */
  listKeys(tenantId: string): TenantApiKey[] {
    const out: ApiKeyRow[] = [];
    for (const k of rowsOf<ApiKeyRow>(this.snap, 'apikey').values()) if (k.tenantId === tenantId) out.push(k);
    return out.sort((a, b) => a.createdAt - b.createdAt).map(toKey);
  }

  /** Deletes one key of the tenant; false when the tenant has no such key. */
  deleteKey(tenantId: string, id: string): boolean {
    const row = getRow<ApiKeyRow>(this.snap, 'apikey', id);
    if (!row || row.tenantId !== tenantId) return false;
    this.core.apply(planDelete(this.snap, row, this.core.apiRevision()));
    return true;
  }

  /** The tenant a raw key belongs to, or undefined. */
  tenantOfKey(key: string): string | undefined {
    return hashIndex(this.snap).get(hashToken(key))?.tenantId;
  }
}
