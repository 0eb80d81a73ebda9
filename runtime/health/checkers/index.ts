import type { Logger } from '../../log/logger.js';
import type { HealthCheckType } from '../../../core/model/types.js';
import type { Checker } from '../types.js';
import { tcpChecker } from './tcp.js';
import { NativeTcpChecker, nativeSynChecker, nativeTcpChecker, TCP_PROBE_ENV } from './tcp-native.js';
import { httpChecker } from './http.js';
import { createIcmpChecker } from './icmp.js';
import { createScriptChecker } from './script.js';
import type { ScriptPolicy } from '../../config/script-policy.js';
import { webhookChecker } from './webhook.js';

/** One checker per check type (gslb-api.md "Health check types"). `http` covers HTTPS (`tls`). */
export type CheckerSet = Record<HealthCheckType, Checker>;

/**
 * Which TCP probe implementation a checker set uses (`core.ports.tcpProbePath`): `syn` (the addon,
 * half-open probes for IPv4 members, connect() for IPv6), `native` (the addon, connect()) or `net`
 * (`net.connect`).
 */
export type TcpProbePath = 'syn' | 'native' | 'net';

const fallbackLogged = new Set<string>();
function warnOnce(log: Logger, key: string, err: string, msg: string): void {
  if (fallbackLogged.has(key)) return;
  fallbackLogged.add(key);
  log.warn({ err }, msg);
}

/**
 * The TCP checker: `syn` when asked for (`health.tcpProbeMode: syn`) and the raw socket opens (else
 * one warning and `native`), the native addon unless `net` is asked for or the environment
 * variable GSLBD_TCP_PROBE=net is set, or the addon cannot be loaded (one warning per process),
 * then `net.connect`.
 */
export function selectTcpChecker(log: Logger, prefer: TcpProbePath = 'native'): Checker {
  if (prefer === 'net') return tcpChecker;
  if (prefer === 'syn' && process.env[TCP_PROBE_ENV] !== 'net') {
    const syn = nativeSynChecker();
    if (syn instanceof NativeTcpChecker) return syn;
    warnOnce(log, 'syn', syn.message, 'half-open SYN probes unavailable; TCP checks use connect()');
  }
  const native = nativeTcpChecker();
  if (native instanceof NativeTcpChecker) return native;
  if (process.env[TCP_PROBE_ENV] !== 'net') warnOnce(log, 'native', native.message, 'native TCP probe addon unavailable; TCP checks use net.connect');
  return tcpChecker;
}

/** The TCP probe path of a checker set. */
export function tcpProbePath(checkers: CheckerSet): TcpProbePath {
  if (!(checkers.tcp instanceof NativeTcpChecker)) return 'net';
  return checkers.tcp.syn ? 'syn' : 'native';
}

/** Scripts are refused unless the daemon's configuration allows them (`health.allowScripts`). */
const NO_SCRIPTS: ScriptPolicy = { allow: false, dirs: [] };

/**
 * The daemon's checkers. `scripts` is the node's script policy (`health.allowScripts`,
 * `health.scriptDirs`; default: scripts refused), enforced by the script checker on every probe.
 * `pingBinary` exists for tests of the missing-capability path; `tcpProbe` forces the TCP path
 * (default: native when available).
 */
export function createCheckers(log: Logger, opts: { pingBinary?: string; tcpProbe?: TcpProbePath; scripts?: ScriptPolicy } = {}): CheckerSet {
  return {
    tcp: selectTcpChecker(log, opts.tcpProbe),
    http: httpChecker,
    icmp: createIcmpChecker(log, opts.pingBinary),
    script: createScriptChecker(log, opts.scripts ?? NO_SCRIPTS),
    webhook: webhookChecker,
  };
}

export { tcpChecker, httpChecker, createIcmpChecker, createScriptChecker, webhookChecker };
