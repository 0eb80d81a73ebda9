import { stalled, transient, type ReconcileError } from '../errors.js';
import { OffloadError } from '../offload/offload.js';

/** The stalled ManifestsInvalid error for a list of problems (each file:line). */
export function invalid(problems: string[]): ReconcileError {
  return stalled('ManifestsInvalid', `${problems.length} problem${problems.length === 1 ? '' : 's'} in the manifests: ${problems[0]}${problems.length > 1 ? ' …' : ''}`, { problems });
}

/** The ReconcileError of a failed offload request: FetchFailed and worker failures are transient, a plan that cannot be made is stalled. */
export function offloadError(err: unknown): ReconcileError {
  if (!(err instanceof OffloadError)) return transient('ApplyFailed', (err as Error).message, { cause: err });
  if (err.reason === 'ManifestsInvalid') return stalled('ManifestsInvalid', err.message, { cause: err, problems: [err.message] });
  return transient(err.reason === 'FetchFailed' ? 'FetchFailed' : 'ApplyFailed', err.message, { cause: err });
}
