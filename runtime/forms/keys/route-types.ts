/** Request types of /api/v1/apikeys, equal to their schemas (schemas/api-formkeys.v1.schema.json). */
export type FormKeyCreateBody = { name: string; scopes: ('forms:read' | 'forms:write' | 'submissions:read')[]; formId?: string | null };
export type TenantQuery = { tenant?: string };
export type FormKeyParams = { id: string };
