import type { Checker, CheckResult, CheckTarget } from '../types.js';
import { describeError, elapsedMs } from '../types.js';

/**
 * Webhook check: calls `webhookURL` with `webhookMethod`. POST sends `{ip, port}` as JSON, GET
 * sends no body. Healthy on any 2xx; any other status or a network error is unhealthy. The body
 * is discarded unread.
 */
export const webhookChecker: Checker = {
  async check(target: CheckTarget, signal: AbortSignal): Promise<CheckResult> {
    const c = target.check;
    const start = performance.now();
    try {
      const post = c.webhookMethod !== 'GET';
      const res = await fetch(c.webhookURL, {
        method: post ? 'POST' : 'GET',
        headers: post ? { 'content-type': 'application/json', 'user-agent': 'gslbd-health' } : { 'user-agent': 'gslbd-health' },
        body: post ? JSON.stringify({ ip: target.ip, port: target.port }) : undefined,
        redirect: 'manual',
        signal,
      });
      await res.body?.cancel().catch(() => {});
      const ok = res.status >= 200 && res.status < 300;
      return { ok, rttMs: elapsedMs(start), detail: `status ${res.status}` };
    } catch (err) {
      return { ok: false, rttMs: 0, detail: signal.aborted ? 'timeout' : describeError((err as { cause?: unknown }).cause ?? err) };
    }
  },
};
