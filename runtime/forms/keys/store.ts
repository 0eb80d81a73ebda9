import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { RowWriter } from '../../app.js';
import { writeUnique, type UniqueWriter } from '../../ports/unique-names.js';
import type { Db } from '../../store/db.js';
import { planCreate, planDelete } from '../../../core/plan/delta.js';
import { badRequest, conflict } from '../../errors.js';
import { getRow, rowsOf, type Snapshot } from '../../../core/snapshot/snapshot.js';
import { tableIndex } from '../../../core/snapshot/table-index.js';
import { FORM_SCOPES, type FormCaller, type FormKeyRow, type FormScope } from './types.js';

/** A form key as listed: never the secret, never its hash. Times in Unix seconds. */
export interface FormKeyView {
  id: string;
  tenantId: string;
  name: string;
  scopes: FormScope[];
  formId: string | null;
  origin: string;
  createdAt: number;
  lastUsedAt: number | null;
}

export interface FormKeyInput { name: string; scopes: string[]; formId?: string | null | undefined }

/** How often a key's last-used time is written at most. */
export const TOUCH_INTERVAL_MS = 60_000;

const NAME = /^[\x20-\x7e]{1,100}$/;
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

const byHash = new WeakMap<object, Map<string, FormKeyRow>>();

/**
 * Form-service API keys (docs/forms.md "Workspaces and API keys") as `formkey` rows written
 * through one-row plans: the secret (`gslbf_` + 32 random bytes, base64url) is returned once and
 * only its SHA-256 hex is stored, so lookups compare hashes through a per-snapshot index. The
 * last-used time lives in the node-local table `form_key_usage`, written at most once a minute.
 */
export class FormKeyStore {
  private readonly touched = new Map<string, number>();

  constructor(private readonly core: RowWriter & { db: Db; ports?: UniqueWriter['ports'] }, private readonly now: () => number = Date.now) {}

  private get snap(): Snapshot {
    return this.core.holder.current;
  }

  private newKey(tenantId: string, input: FormKeyInput): { row: FormKeyRow; key: string } {
    if (typeof input.name !== 'string' || !NAME.test(input.name)) throw badRequest('name: must be 1 to 100 printable characters');
    const scopes = checkScopes(input.scopes);
    const formId = input.formId ?? null;
    if (formId !== null) {
      const form = getRow(this.snap, 'form', formId);
      if (!form || form.tenantId !== tenantId) throw badRequest(`formId: no form ${formId} in this workspace`);
    }
    if (this.rowsOf(tenantId).some((k) => k.name === input.name)) throw conflict(`an API key named "${input.name}" already exists`);
    const key = `gslbf_${randomBytes(32).toString('base64url')}`;
    const row: FormKeyRow = {
      kind: 'formkey', id: randomUUID(), tenantId, origin: 'api', revision: '', name: input.name, keyHash: sha256(key), scopes, formId, createdAt: this.now(),
    };
    return { row, key };
  }

  /** Makes a key for the tenant; the raw secret is in `key` and nowhere else. */
  create(tenantId: string, input: FormKeyInput): FormKeyView & { key: string } {
    const { row, key } = this.newKey(tenantId, input);
    this.core.apply(planCreate(this.snap, row, this.core.apiRevision()));
    return { ...this.view(row), key };
  }

  /**
   * As {@link create}, with the name reserved cluster-wide first (docs/cluster.md "Unique names"):
   * of two nodes creating one name at once, one gets the 409 above.
   */
  async createReserved(tenantId: string, input: FormKeyInput): Promise<FormKeyView & { key: string }> {
    const { row, key } = this.newKey(tenantId, input);
    const c = this.core;
    await writeUnique({ holder: c.holder, apply: (p) => c.apply(p), apiRevision: () => c.apiRevision(), ports: c.ports ?? {} }, (snap, rev) => planCreate(snap, row, rev));
    return { ...this.view(row), key };
  }

  /** The tenant's keys, oldest first. */
  list(tenantId: string): FormKeyView[] {
    return this.rowsOf(tenantId).sort((a, b) => a.createdAt - b.createdAt).map((r) => this.view(r));
  }

  /** The tenant's key by id, or undefined (another tenant's key is not there). */
  get(tenantId: string, id: string): FormKeyRow | undefined {
    const row = this.find(id);
    return row && row.tenantId === tenantId ? row : undefined;
  }

  /** A key by id in any workspace (for supra-tenant callers), or undefined. */
  find(id: string): FormKeyRow | undefined {
    return getRow<FormKeyRow>(this.snap, 'formkey', id);
  }

  /** Deletes one key of the tenant; false when the tenant has no such key. */
  delete(tenantId: string, id: string): boolean {
    const row = this.get(tenantId, id);
    if (!row) return false;
    this.core.apply(planDelete(this.snap, row, this.core.apiRevision()));
    return true;
  }

  /** The caller a raw key stands for, or undefined. */
  authenticate(raw: string): FormCaller | undefined {
    const row = tableIndex<FormKeyRow>(this.snap, 'formkey', byHash, (k) => k.keyHash).get(sha256(raw));
    if (!row) return undefined;
    return { keyId: row.id, keyName: row.name, tenantId: row.tenantId, scopes: row.scopes, formId: row.formId };
  }

  /** In a cluster: told each use this node writes, so the other nodes record it too (docs/forms.md "In a cluster"). */
  onTouch: ((keyId: string, at: number) => void) | undefined;

  /** Records a use of the key: written when the last write is a minute old or more. */
  touch(keyId: string): void {
    const now = this.now();
    const last = this.touched.get(keyId);
    if (last !== undefined && now - last < TOUCH_INTERVAL_MS) return;
    this.touched.set(keyId, now);
    this.recordUse(keyId, now);
    this.onTouch?.(keyId, now);
  }

  /** Records that the key was used at `at` (on any node); an earlier time than the one recorded changes nothing. */
  recordUse(keyId: string, at: number): void {
    this.core.db.prepare(`INSERT INTO form_key_usage (key_id, last_used_at) VALUES (?, ?)
      ON CONFLICT(key_id) DO UPDATE SET last_used_at = MAX(last_used_at, excluded.last_used_at)`).run(keyId, at);
  }

  /** When the key was last used (ms): on this node, or on any node of a cluster; undefined when never. */
  lastUsed(keyId: string): number | undefined {
    const r = this.core.db.prepare('SELECT last_used_at FROM form_key_usage WHERE key_id = ?').get(keyId) as { last_used_at: number } | undefined;
    return r?.last_used_at;
  }

  private rowsOf(tenantId: string): FormKeyRow[] {
    const out: FormKeyRow[] = [];
    for (const k of rowsOf<FormKeyRow>(this.snap, 'formkey').values()) if (k.tenantId === tenantId) out.push(k);
    return out;
  }

  private view(r: FormKeyRow): FormKeyView {
    const used = this.lastUsed(r.id);
    return {
      id: r.id, tenantId: r.tenantId, name: r.name, scopes: r.scopes, formId: r.formId, origin: r.origin,
      createdAt: Math.floor(r.createdAt / 1000), lastUsedAt: used === undefined ? null : Math.floor(used / 1000),
    };
  }
}

/** The scopes of a new key: at least one, each known, no repeats. */
function checkScopes(scopes: unknown): FormScope[] {
  const allowed: readonly string[] = FORM_SCOPES;
  if (!Array.isArray(scopes) || scopes.length === 0) throw badRequest(`scopes: give at least one of ${FORM_SCOPES.join(', ')}`);
  for (const s of scopes) if (typeof s !== 'string' || !allowed.includes(s)) throw badRequest(`scopes: "${String(s)}" is not one of ${FORM_SCOPES.join(', ')}`);
  return [...new Set(scopes as FormScope[])];
}
