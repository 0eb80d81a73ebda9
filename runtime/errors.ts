/**
 * One error base class for the whole daemon. `code` says which area raised it and what the caller
 * should do: API_ codes map to HTTP statuses, CTRL_ codes classify controller failures
 * (transient → retry with backoff, stalled → needs a new commit, waiting → retry later).
 */
export type ErrorCode =
  | 'API_BAD_REQUEST'
  | 'API_UNAUTHORIZED'
  | 'API_FORBIDDEN'
  | 'API_NOT_FOUND'
  | 'API_CONFLICT'
  | 'API_PAYLOAD_TOO_LARGE'
  | 'API_UNSUPPORTED_MEDIA_TYPE'
  | 'API_UNPROCESSABLE'
  | 'API_RATE_LIMITED'
  | 'API_INTERNAL'
  | 'CONFIG_INVALID'
  | 'STORE_OPEN_FAILED'
  | 'STORE_FAILED'
  | 'STORE_RESTORE_REFUSED'
  | 'CTRL_TRANSIENT'
  | 'CTRL_STALLED'
  | 'CTRL_WAITING'
  | 'DNS_DEADLINE';

const HTTP_STATUS: Partial<Record<ErrorCode, number>> = {
  API_BAD_REQUEST: 400,
  API_UNAUTHORIZED: 401,
  API_FORBIDDEN: 403,
  API_NOT_FOUND: 404,
  API_CONFLICT: 409,
  API_PAYLOAD_TOO_LARGE: 413,
  API_UNSUPPORTED_MEDIA_TYPE: 415,
  API_UNPROCESSABLE: 422,
  API_RATE_LIMITED: 429,
  CONFIG_INVALID: 400,
};

export class GslbError extends Error {
  readonly code: ErrorCode;
  /** Extra fields merged into an API error body (e.g. `mfaRequired`). Never secrets. */
  readonly extra: Record<string, unknown> | undefined;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; extra?: Record<string, unknown> }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.extra = options?.extra;
  }
  /** HTTP status for this error (500 when the code has no mapping). */
  get status(): number {
    return HTTP_STATUS[this.code] ?? 500;
  }
}

export const badRequest = (msg: string, extra?: Record<string, unknown>) =>
  new GslbError('API_BAD_REQUEST', msg, extra ? { extra } : undefined);
export const notFound = (msg: string) => new GslbError('API_NOT_FOUND', msg);
export const conflict = (msg: string) => new GslbError('API_CONFLICT', msg);
export const unauthorized = (msg = 'authentication required') => new GslbError('API_UNAUTHORIZED', msg);
export const forbidden = (msg = 'permission denied') => new GslbError('API_FORBIDDEN', msg);

/** A list of problems found while validating a config file or a manifest set. */
export class ValidationError extends GslbError {
  readonly problems: string[];
  constructor(problems: string[], what = 'configuration') {
    super('CONFIG_INVALID', `invalid ${what}:\n  - ${problems.join('\n  - ')}`);
    this.problems = problems;
  }
}
