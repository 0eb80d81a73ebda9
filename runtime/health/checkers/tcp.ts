import { connect } from 'node:net';
import type { Checker, CheckResult, CheckTarget } from '../types.js';
import { describeError, elapsedMs } from '../types.js';

/**
 * TCP check: healthy when a connection to the member IP and the check's port is established
 * within the timeout (gslb-api.md "Health check types"). The socket is closed at once.
 */
export const tcpChecker: Checker = {
  check(target: CheckTarget, signal: AbortSignal): Promise<CheckResult> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve({ ok: false, rttMs: 0, detail: 'timeout' });
      const start = performance.now();
      const sock = connect({ host: target.ip, port: target.port });
      sock.pause(); // never read: saves arming the read side when the connection completes
      let done = false;
      const finish = (r: CheckResult) => {
        if (done) return;
        done = true;
        signal.removeEventListener('abort', onAbort);
        // Close with RST (SO_LINGER 0), as load balancers do for health probes: no FIN exchange and
        // no TIME_WAIT entry per probe, which at thousands of probes a second adds up.
        if (r.ok) sock.resetAndDestroy();
        else sock.destroy();
        resolve(r);
      };
      const onAbort = () => finish({ ok: false, rttMs: 0, detail: 'timeout' });
      signal.addEventListener('abort', onAbort, { once: true });
      sock.once('connect', () => finish({ ok: true, rttMs: elapsedMs(start), detail: 'connected' }));
      sock.once('error', (err) => finish({ ok: false, rttMs: 0, detail: `connect ${describeError(err)}` }));
    });
  },
};
