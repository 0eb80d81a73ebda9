import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { Checker, CheckResult, CheckTarget } from '../types.js';
import { describeError, elapsedMs } from '../types.js';

/** Largest body prefix read for the `httpContains` check (gslb-api.md §8). */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Reads `res` until `needle` appears or `limit` bytes were read. Chunks are searched with an
 * overlap of needle length − 1 bytes, so a match split across chunks is found without keeping the
 * whole body.
 */
export function bodyContains(res: IncomingMessage, needle: Buffer, limit: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    let read = 0;
    let tail = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      const room = limit - read;
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      read += part.length;
      const hay = tail.length ? Buffer.concat([tail, part]) : part;
      if (hay.indexOf(needle) >= 0) return stop(true);
      if (read >= limit) return stop(false);
      tail = Buffer.from(hay.subarray(Math.max(0, hay.length - (needle.length - 1))));
    };
    const stop = (v: boolean) => {
      res.off('data', onData);
      res.destroy();
      resolve(v);
    };
    res.on('data', onData);
    res.once('end', () => resolve(false));
    res.once('error', reject);
  });
}

/**
 * HTTP and HTTPS check: GET `httpPath` on the member IP and the check's port. `httpHost` is sent
 * as the Host header and, with TLS, as the server name (SNI and certificate name) while the TCP
 * connection still goes to the member IP. Healthy when the status equals `httpExpectedStatus`
 * (0 accepts any) and, if `httpContains` is set, the first MAX_BODY_BYTES of the body contain it.
 * The caller's signal bounds the dial and the whole request, body included.
 */
export const httpChecker: Checker = {
  check(target: CheckTarget, signal: AbortSignal): Promise<CheckResult> {
    const c = target.check;
    return new Promise((resolve) => {
      if (signal.aborted) return resolve({ ok: false, rttMs: 0, detail: 'timeout' });
      const start = performance.now();
      const headers: Record<string, string> = { 'user-agent': 'gslbd-health', accept: '*/*' };
      if (c.httpHost) headers.host = c.httpHost;
      const base = { host: target.ip, port: target.port, path: c.httpPath || '/', method: 'GET', headers, agent: false as const, signal };
      // An IP is never a valid SNI name (RFC 6066 §3); without httpHost no server name is sent.
      const servername = c.httpHost && isIP(c.httpHost) === 0 ? c.httpHost.replace(/:\d+$/, '') : '';
      const req = c.tls
        ? httpsRequest({ ...base, servername, rejectUnauthorized: !c.insecureSkipVerify })
        : httpRequest(base);
      let done = false;
      const finish = (r: CheckResult) => {
        if (done) return;
        done = true;
        req.destroy();
        resolve(r);
      };
      req.once('error', (err) => finish({ ok: false, rttMs: 0, detail: signal.aborted ? 'timeout' : describeError(err) }));
      req.once('response', (res) => {
        const status = res.statusCode ?? 0;
        if (c.httpExpectedStatus !== 0 && status !== c.httpExpectedStatus) {
          res.destroy();
          return finish({ ok: false, rttMs: elapsedMs(start), detail: `status ${status}, want ${c.httpExpectedStatus}` });
        }
        if (!c.httpContains) {
          res.destroy();
          return finish({ ok: true, rttMs: elapsedMs(start), detail: `status ${status}` });
        }
        bodyContains(res, Buffer.from(c.httpContains), MAX_BODY_BYTES).then(
          (found) => finish(found
            ? { ok: true, rttMs: elapsedMs(start), detail: `status ${status}, body matches` }
            : { ok: false, rttMs: elapsedMs(start), detail: `status ${status}, body lacks ${JSON.stringify(c.httpContains)}` }),
          (err) => finish({ ok: false, rttMs: 0, detail: signal.aborted ? 'timeout' : describeError(err) }),
        );
      });
      req.end();
    });
  },
};
