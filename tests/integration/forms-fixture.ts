import { createHash, randomBytes } from 'node:crypto';
import { planCreate } from '../../controller/plan/delta.js';
import { kindInfo, registerKind } from '../../runtime/model/kinds.js';
import type { FormKeyRow, FormScope } from '../../runtime/forms/keys/types.js';
import { api, type TestDaemon } from '../helpers/daemon.js';

/** Every scope a form key can have. */
export const ALL_SCOPES: FormScope[] = ['forms:read', 'forms:write', 'submissions:read'];

/** The `formkey` kind, registered here only when the daemon's code has not registered it. */
function ensureFormKeyKind(): void {
  try {
    kindInfo('formkey');
  } catch {
    registerKind({ kind: 'formkey', order: 5, label: (r) => `form API key "${String((r as FormKeyRow).name)}"`, secretFields: ['keyHash'] });
  }
}

/**
 * A form API key of a workspace, written as a `formkey` row through the one write path (only the
 * SHA-256 hex of the secret is stored). Returns the secret and the row id.
 */
export function addFormKey(d: TestDaemon, opts: { tenantId?: string; scopes?: FormScope[]; formId?: string | null; name?: string } = {}): { key: string; id: string } {
  ensureFormKeyKind();
  const key = `gslbf_${randomBytes(32).toString('base64url')}`;
  const row: FormKeyRow = {
    kind: 'formkey', id: d.core.newId(), origin: 'api', revision: '', tenantId: opts.tenantId ?? 'default',
    name: opts.name ?? 'test key', keyHash: createHash('sha256').update(key).digest('hex'),
    scopes: opts.scopes ?? ALL_SCOPES, formId: opts.formId ?? null, createdAt: Date.now(),
  };
  d.core.apply(planCreate(d.core.holder.current, row, d.core.apiRevision()));
  return { key, id: row.id };
}

/** A /public/v1 client with one key: `call('GET', '/form')`. */
export function publicClient(d: TestDaemon, key: string | undefined) {
  return (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    api(d.url, method, `/public/v1${path}`, body, { ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...headers });
}
