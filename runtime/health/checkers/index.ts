import type { Logger } from '../../log/logger.js';
import type { HealthCheckType } from '../../model/types.js';
import type { Checker } from '../types.js';
import { tcpChecker } from './tcp.js';
import { httpChecker } from './http.js';
import { createIcmpChecker } from './icmp.js';
import { scriptChecker } from './script.js';
import { webhookChecker } from './webhook.js';

/** One checker per check type (gslb-api.md "Health check types"). `http` covers HTTPS (`tls`). */
export type CheckerSet = Record<HealthCheckType, Checker>;

/** The daemon's checkers. `pingBinary` exists for tests of the missing-capability path. */
export function createCheckers(log: Logger, opts: { pingBinary?: string } = {}): CheckerSet {
  return {
    tcp: tcpChecker,
    http: httpChecker,
    icmp: createIcmpChecker(log, opts.pingBinary),
    script: scriptChecker,
    webhook: webhookChecker,
  };
}

export { tcpChecker, httpChecker, createIcmpChecker, scriptChecker, webhookChecker };
