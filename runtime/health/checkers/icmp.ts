import { spawn } from 'node:child_process';
import type { Logger } from '../../log/logger.js';
import type { Checker, CheckResult, CheckTarget } from '../types.js';
import { describeError } from '../types.js';

/** Seconds between echo requests; 0.2 s is the smallest interval iputils allows without root. */
const ECHO_INTERVAL_S = 0.2;
const REPLY = /time[=<]([\d.]+) ?ms/g;
const NO_CAPABILITY = /operation not permitted|permission denied|socket: |cap_net_raw|lacking privilege/i;

/** Round-trip times (ms) of the echo replies printed by iputils `ping`. Pure. */
export function parsePingReplies(stdout: string): number[] {
  const out: number[] = [];
  for (const m of stdout.matchAll(REPLY)) out.push(Number(m[1]));
  return out;
}

/** Arguments for `ping`: icmpCount echoes, numeric output, a deadline covering the timeout. */
export function pingArgs(ip: string, count: number, timeoutMs: number): string[] {
  const deadline = String(Math.max(1, Math.ceil(timeoutMs / 1000)));
  return ['-n', '-c', String(Math.max(1, count)), '-i', String(ECHO_INTERVAL_S), '-W', deadline, '-w', deadline, ip];
}

/**
 * ICMP check through the system `ping` (iputils), which holds CAP_NET_RAW as a file capability
 * or uses an unprivileged ICMP socket (net.ipv4.ping_group_range), so the daemon needs no
 * privilege itself. Sends `icmpCount` echoes; healthy when at least one reply arrives; rttMs is the
 * average of the replies. When the caller's signal aborts, ping is killed and the replies printed
 * so far count. When ping cannot open its socket (no capability), every probe logs a warning and
 * is unhealthy (gslb-api.md "Health check types"). One process per probe: fine for hundreds of
 * ICMP targets per second, not for thousands (docs/health.md "ICMP").
 */
export function createIcmpChecker(log: Logger, binary = 'ping'): Checker {
  return {
    check(target: CheckTarget, signal: AbortSignal): Promise<CheckResult> {
      return new Promise((resolve) => {
        let stdout = '';
        let stderr = '';
        let done = false;
        const child = spawn(binary, pingArgs(target.ip, target.check.icmpCount, target.check.timeoutMs), { stdio: ['ignore', 'pipe', 'pipe'] });
        const summarise = (killed: boolean): CheckResult => {
          const rtts = parsePingReplies(stdout);
          if (rtts.length > 0) {
            const avg = rtts.reduce((a, b) => a + b, 0) / rtts.length;
            return { ok: true, rttMs: Math.round(avg * 100) / 100, detail: `${rtts.length}/${target.check.icmpCount} replies` };
          }
          if (NO_CAPABILITY.test(stderr)) {
            log.warn({ pool: target.poolId, ip: target.ip, stderr: stderr.trim().slice(0, 200) }, 'icmp check lacks the capability to send echo requests; endpoint marked unhealthy');
            return { ok: false, rttMs: 0, detail: 'no ICMP capability (CAP_NET_RAW)' };
          }
          return { ok: false, rttMs: 0, detail: killed ? 'timeout: no echo reply' : `no echo reply of ${target.check.icmpCount}` };
        };
        const finish = (r: CheckResult) => {
          if (done) return;
          done = true;
          signal.removeEventListener('abort', onAbort);
          resolve(r);
        };
        const onAbort = () => {
          child.kill('SIGKILL');
          finish(summarise(true));
        };
        signal.addEventListener('abort', onAbort, { once: true });
        if (signal.aborted) onAbort();
        child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d; });
        child.stderr.setEncoding('utf8').on('data', (d: string) => { if (stderr.length < 4096) stderr += d; });
        child.once('error', (err) => {
          log.warn({ err: describeError(err), binary }, 'icmp check cannot run ping; endpoint marked unhealthy');
          finish({ ok: false, rttMs: 0, detail: `ping unavailable: ${describeError(err)}` });
        });
        child.once('close', () => finish(summarise(false)));
      });
    },
  };
}
