import { GslbError } from '../runtime/errors.js';

/**
 * How a failed reconcile step tells the loop what to do next (DESIGN decision 10, Flux's error
 * classes): `transient` retries with backoff (the git server was down), `stalled` needs a new commit
 * or a person (bad signature, bad YAML, a held-back plan) and is not hammered, `waiting` retries
 * after a delay without counting as a failure.
 */
export type ErrorClass = 'transient' | 'stalled' | 'waiting';

/** PascalCase reasons shown in status, events, logs and metrics. */
export type Reason =
  | 'Succeeded'
  | 'NotConfigured'
  | 'NotLeader'
  | 'FetchFailed'
  | 'SignatureMissing'
  | 'SignatureInvalid'
  | 'SignatureUnsupported'
  | 'SignerUnknown'
  | 'SignerNotAllowed'
  | 'KeyringInvalid'
  | 'HistoryRewound'
  | 'ManifestsInvalid'
  | 'TooManyDeletes'
  | 'TooManyUpdates'
  | 'TooMuchTrafficChanged'
  | 'RoutingTestsFailed'
  | 'QuorumNotMet'
  | 'RolledBack'
  | 'CanaryBaking'
  | 'CanaryFailed'
  | 'ApplyConflict'
  | 'ApplyFailed';

const CODE: Record<ErrorClass, 'CTRL_TRANSIENT' | 'CTRL_STALLED' | 'CTRL_WAITING'> = {
  transient: 'CTRL_TRANSIENT', stalled: 'CTRL_STALLED', waiting: 'CTRL_WAITING',
};

/** A reconcile step failure: a class, a PascalCase reason, a message and (for validation) every problem. */
export class ReconcileError extends GslbError {
  readonly errorClass: ErrorClass;
  readonly reason: Reason;
  readonly problems: string[];
  constructor(errorClass: ErrorClass, reason: Reason, message: string, opts: { cause?: unknown; problems?: string[] } = {}) {
    super(CODE[errorClass], message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.errorClass = errorClass;
    this.reason = reason;
    this.problems = opts.problems ?? [];
  }
}

/** Needs a new commit or a person: do not retry the same revision. */
export const stalled = (reason: Reason, message: string, opts?: { cause?: unknown; problems?: string[] }) => new ReconcileError('stalled', reason, message, opts);
/** Retry with backoff. */
export const transient = (reason: Reason, message: string, opts?: { cause?: unknown }) => new ReconcileError('transient', reason, message, opts);
/** Retry after a delay; not a failure. */
export const waiting = (reason: Reason, message: string) => new ReconcileError('waiting', reason, message);
