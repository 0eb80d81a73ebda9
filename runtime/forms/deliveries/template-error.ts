import { GslbError } from '../../errors.js';

/**
 * A template that does not parse, fails to render, or passes a limit (size, render time, memory,
 * the render pool's wall-clock limit): a 400 in an API answer, and a permanent failure of a
 * delivery (`permanent`: the same template fails the same way on every attempt, so it is not
 * retried; docs/forms.md "Deliveries").
 */
export class TemplateError extends GslbError {
  readonly permanent = true;
  constructor(message: string, cause?: unknown) {
    super('API_BAD_REQUEST', message, cause === undefined ? undefined : { cause });
  }
}

/**
 * The render pool has no room for another render of this tenant (docs/forms.md "Templates"): 429
 * with Retry-After on /public/v1; a delivery that meets it is retried (not permanent).
 */
export class RenderBusyError extends GslbError {
  constructor(message: string, readonly retryAfterS: number) {
    super('API_RATE_LIMITED', message);
  }
}
