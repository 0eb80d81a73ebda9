/**
 * The error names of /public/v1 (docs/forms.md "The /public/v1 API"): every error body is
 * `{name, message}` (forms-api.md §7), `name` chosen by the status.
 */
export const PUBLIC_ERROR_NAMES = {
  400: 'validation_error',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'schema_mismatch',
  429: 'rate_limited',
  500: 'internal_error',
} as const;

export type PublicErrorStatus = keyof typeof PUBLIC_ERROR_NAMES;
export type PublicErrorName = (typeof PUBLIC_ERROR_NAMES)[PublicErrorStatus];

/** An error body of /public/v1. */
export interface PublicError { name: PublicErrorName; message: string }

/**
 * The status and name an error answers with: a catalogued status as it is; any other status of
 * 500 or more as 500 `internal_error`; any other 4xx as 400 `validation_error` (the request is
 * wrong, and the message says how).
 */
export function publicStatus(status: number): PublicErrorStatus {
  if (Object.hasOwn(PUBLIC_ERROR_NAMES, status)) return status as PublicErrorStatus;
  return status >= 500 ? 500 : 400;
}

/** The `{name, message}` body of an error status (for errors answered outside the prefix's plugin, runtime/api/errors.ts). */
export function publicErrorBody(status: number, message: string): PublicError {
  return { name: PUBLIC_ERROR_NAMES[publicStatus(status)], message };
}
