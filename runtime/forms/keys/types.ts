import type { GenericRow } from '../../../core/model/types.js';

/** What a form-service API key may do (forms-api.md §5). */
export const FORM_SCOPES = ['forms:read', 'forms:write', 'submissions:read'] as const;
export type FormScope = (typeof FORM_SCOPES)[number];

/**
 * A form-service API key (row kind `formkey`; `kind: ApiKey` in git). Only the SHA-256 hex of the
 * secret is stored. A key belongs to one workspace (tenant) and, when `formId` is set, to one form
 * only. Not the legacy tenant key (`apikey` rows, /tenants/{id}/apikeys): that one acts as a
 * tenant_admin on /api/v1 and is never accepted on /public/v1, and a form key is never accepted on
 * /api/v1 (separate kinds, separate lookups).
 */
export interface FormKeyRow extends GenericRow {
  kind: 'formkey';
  name: string;
  keyHash: string;
  scopes: FormScope[];
  /** the one form this key may reach, or null for every form of the workspace */
  formId: string | null;
  createdAt: number;
}

/** The caller of a /public/v1 request once its key is accepted. */
export interface FormCaller {
  keyId: string;
  keyName: string;
  tenantId: string;
  scopes: readonly FormScope[];
  formId: string | null;
}
