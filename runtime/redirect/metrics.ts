import { Counter, type Registry } from 'prom-client';

/** Statuses the redirect listener answers, each exported from the start at 0. */
const CODES = ['301', '302', '307', '308', '400', '404'] as const;

/**
 * `gslbd_redirect_requests_total{code}`: requests the redirect listener answered, by status
 * (301, 302, 307, 308 redirects; 404 no rule for the host; 400 a request it could not answer).
 * Returns the function the listener calls once per answer.
 */
export function createRedirectMetrics(registry: Registry): (status: number) => void {
  const counter = new Counter({ name: 'gslbd_redirect_requests_total', help: 'HTTP requests answered by the redirect listener, by status code', labelNames: ['code'], registers: [registry] });
  for (const c of CODES) counter.inc({ code: c }, 0);
  return (status) => counter.inc({ code: String(status) });
}
