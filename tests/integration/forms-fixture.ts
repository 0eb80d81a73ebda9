import { FormKeyStore } from '../../runtime/forms/keys/store.js';
import type { FormScope } from '../../runtime/forms/keys/types.js';
import { api, type TestDaemon } from '../helpers/daemon.js';

/** Every scope a form key can have. */
export const ALL_SCOPES: FormScope[] = ['forms:read', 'forms:write', 'submissions:read'];

let made = 0;

/**
 * A form API key of a workspace, made by the daemon's key store (a `formkey` row through the one
 * write path; only the SHA-256 of the secret stored). Names are unique per workspace, so the
 * default name is numbered. Returns the secret and the key's id.
 */
export function addFormKey(d: TestDaemon, opts: { tenantId?: string; scopes?: FormScope[]; formId?: string | null; name?: string } = {}): { key: string; id: string } {
  const k = new FormKeyStore(d.core).create(opts.tenantId ?? 'default', { name: opts.name ?? `test key ${++made}`, scopes: opts.scopes ?? ALL_SCOPES, formId: opts.formId ?? null });
  return { key: k.key, id: k.id };
}

/** A /public/v1 client with one key: `call('GET', '/form')`. */
export function publicClient(d: TestDaemon, key: string | undefined) {
  return (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    api(d.url, method, `/public/v1${path}`, body, { ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...headers });
}
