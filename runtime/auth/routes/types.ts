import type { Role } from '../../ports/permissions.js';

/**
 * TypeScript shapes of the request parts in schemas/api-auth.v1.schema.json (`$defs` of the same
 * name), for the route generics of runtime/auth/routes. The schema validates; these only type
 * what it let through, so each mirrors its definition field by field. Response bodies are the
 * model's own types (PublicUser, LoginResponse, Tenant, TenantApiKey).
 */

/** `SetupRequest`: POST /auth/setup. */
export type SetupBody = { email: string; password: string; displayName?: string };

/** `LoginRequest`: POST /auth/login. */
export type LoginBody = { email: string; password: string; totpCode?: string };

/** `TotpVerifyRequest`: POST /auth/totp/verify. */
export type TotpVerifyBody = { code: string };

/** `OidcCallbackQuery`: GET /auth/oidc/callback; these and any other parameters go on to the code exchange. */
export type OidcCallbackQuery = { code?: string; state?: string; error?: string; error_description?: string };

/** `PasswordResetRequest`: POST /auth/password-reset. */
export type PasswordResetBody = { email: string };

/** `PasswordResetConfirm`: POST /auth/password-reset/confirm. */
export type PasswordResetConfirmBody = { token: string; password: string };

/** `UserCreate`: POST /users. */
export type UserCreateBody = { email: string; displayName?: string; password: string; role: Role; tenantId?: string };

/** `UserUpdate`: PUT /users/{id}; only the fields sent change. */
export type UserUpdateBody = { displayName?: string; role?: Role; password?: string };

/** `TenantCreate`: POST /tenants. */
export type TenantCreateBody = { id: string; name?: string };

/** `TenantParams`: /tenants/{id}/apikeys. */
export type TenantParams = { id: string };

/** `ApiKeyParams`: DELETE /tenants/{id}/apikeys/{keyId}. */
export type ApiKeyParams = { id: string; keyId: string };

/** `ApiKeyCreate`: POST /tenants/{id}/apikeys (the body may be left out). */
export type ApiKeyCreateBody = { name?: string };
