import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Server } from 'node:net';
import type { NativeTcpChecker } from '../../runtime/health/checkers/tcp-native.js';
import { checkKeyOf } from '../../runtime/health/targets.js';
import type { CheckResult, CheckTarget } from '../../runtime/health/types.js';
import { HEALTHCHECK_DEFAULTS } from '../../core/model/normalize.js';

/** A TCP check target of pool `p` for `ip:port`. */
export function target(ip: string, port: number, timeoutMs = 1000): CheckTarget {
  const check = { ...HEALTHCHECK_DEFAULTS, type: 'tcp' as const, port, timeoutMs };
  return { key: `p|${ip}`, poolId: 'p', ip, port, check, checkKey: checkKeyOf(check), checkId: 'hc' };
}

/** Listens on `host:port` (0: any free port) with `backlog`; resolves with the port. */
export function listen(srv: Server, host = '127.0.0.1', port = 0, backlog = 511): Promise<number> {
  return new Promise((resolve, reject) => {
    srv.once('error', reject);
    srv.listen({ host, port, backlog }, () => resolve((srv.address() as AddressInfo).port));
  });
}

export const close = (srv: Server) => new Promise<void>((r) => srv.close(() => r()));

/**
 * Loopback address `i` of a range (127.1.0.1, 127.1.0.2, …): probes of many members at once reach
 * one listener bound to 0.0.0.0 on different addresses, as they would different hosts (a SYN probe
 * of one address and port at a time, docs/health.md "Half-open SYN probes").
 */
export const loopbackAddress = (i: number) => `127.1.${Math.floor(i / 250)}.${1 + (i % 250)}`;

/**
 * Starts `n` probes at once through the checker's batch queue, each to its own loopback address,
 * the even ones to a listening port (accepted: up), the odd ones to a closed one (refused); checks
 * that every probe is reported once, with its own result, and that nothing stays in flight.
 */
export async function probeManyAtOnce(c: NativeTcpChecker, n: number): Promise<void> {
  const srv = createServer((s) => s.destroy());
  const openPort = await listen(srv, '0.0.0.0', 0, 4096);
  const spare = createServer();
  const closedPort = await listen(spare, '0.0.0.0');
  await close(spare); // nothing listens there any more: refused
  const seen = new Map<number, CheckResult>();
  let dup = 0;
  await new Promise<void>((resolve) => {
    const finish = (i: number, ok: boolean, rttMs: number, detail: string) => {
      if (seen.has(i)) dup++;
      seen.set(i, { ok, rttMs, detail });
      if (seen.size === n) resolve();
    };
    for (let i = 0; i < n; i++) c.start(target(loopbackAddress(i), i % 2 === 0 ? openPort : closedPort), i, finish);
  });
  await new Promise((r) => setTimeout(r, 50)); // anything reported twice would show up now
  assert.equal(dup, 0);
  assert.equal(seen.size, n);
  for (let i = 0; i < n; i++) {
    const r = seen.get(i)!;
    if (i % 2 === 0) assert.equal(r.ok, true, `probe ${i}: ${r.detail}`);
    else assert.equal(r.detail, 'connect ECONNREFUSED', `probe ${i}`);
  }
  assert.equal(c.inflight, 0);
  await close(srv);
}

/** Listens on ::1; skips the test (undefined) where this host has no IPv6 loopback. */
export async function listenIpv6OrSkip(t: { skip: (why: string) => void }, srv: Server): Promise<number | undefined> {
  try {
    return await listen(srv, '::1');
  } catch {
    t.skip('no IPv6 loopback');
    return undefined;
  }
}
