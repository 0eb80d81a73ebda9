import { isIP } from 'node:net';
import type { Logger } from './logger.js';

/** `host:port`, with an IPv6 host in brackets (`[::1]:8080`), as operators paste it into a URL or `dig @`. */
export function hostPort(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * Logs one bound listener at info: msg `listening`, `listener` (`api`, `dns udp`, `dns tcp`,
 * `metrics`, `demo demo-1` …) and `address` (`host:port`, the port actually bound). One line per
 * socket, so an operator reads every address the daemon answers on from the start of its log
 * (docs/logging.md).
 */
export function logListening(log: Logger, listener: string, host: string, port: number): void {
  log.info({ listener, address: hostPort(host, port) }, 'listening');
}
