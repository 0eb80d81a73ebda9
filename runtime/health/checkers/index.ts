import type { Logger } from '../../log/logger.js';
import type { HealthCheckType } from '../../model/types.js';
import type { Checker } from '../types.js';
import { tcpChecker } from './tcp.js';
import { NativeTcpChecker, nativeTcpChecker, TCP_PROBE_ENV } from './tcp-native.js';
import { httpChecker } from './http.js';
import { createIcmpChecker } from './icmp.js';
import { createScriptChecker } from './script.js';
import type { ScriptPolicy } from '../../model/script-policy.js';
import { webhookChecker } from './webhook.js';

/** One checker per check type (gslb-api.md "Health check types"). `http` covers HTTPS (`tls`). */
export type CheckerSet = Record<HealthCheckType, Checker>;

/** Which TCP probe implementation a checker set uses (`core.ports.tcpProbePath`). */
export type TcpProbePath = 'native' | 'net';

let fallbackLogged = false;

/**
 * The TCP checker: the native addon (native/tcp-probe) unless `tcpProbe: 'net'` or the environment
 * variable GSLBD_TCP_PROBE=net asks for `net.connect`, or the addon cannot be loaded (logged once
 * per process).
 */
export function selectTcpChecker(log: Logger, prefer: TcpProbePath = 'native'): Checker {
  if (prefer === 'net') return tcpChecker;
  const native = nativeTcpChecker();
  if (native instanceof NativeTcpChecker) return native;
  if (!fallbackLogged && process.env[TCP_PROBE_ENV] !== 'net') {
    fallbackLogged = true;
    log.warn({ err: native.message }, 'native TCP probe addon unavailable; TCP checks use net.connect');
  }
  return tcpChecker;
}

/** The TCP probe path of a checker set. */
export function tcpProbePath(checkers: CheckerSet): TcpProbePath {
  return checkers.tcp instanceof NativeTcpChecker ? 'native' : 'net';
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
