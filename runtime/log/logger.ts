import { hostname } from 'node:os';
import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/** Keys whose values are never written to a log line. */
export const REDACT_PATHS = [
  'password', '*.password', 'secret', '*.secret', 'token', '*.token', 'clientSecret', '*.clientSecret',
  'apiKey', '*.apiKey', 'routingKey', '*.routingKey', 'totpCode', '*.totpCode',
  // secret fields of user and apikey rows (core/model/kinds.ts), should a row ever be logged
  'passwordHash', '*.passwordHash', 'totpSecret', '*.totpSecret', 'totpPending', '*.totpPending', 'keyHash', '*.keyHash',
  'req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie',
];

/**
 * The root pino logger. `format: text` pretty-prints for a terminal (pino-pretty); `json` writes one
 * JSON object per line with pino's own keys: `level` (number), `time` (epoch ms), `pid`,
 * `hostname`, `msg`, and an error under `err` (docs/logging.md). Secrets are redacted by key.
 */
export function createLogger(opts: { format: 'json' | 'text'; level: string }, dest?: DestinationStream): Logger {
  // pino's default base; spelled out so the fields log shippers and pino-pretty expect stay put
  const base = { level: opts.level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { pid: process.pid, hostname: hostname() } };
  if (dest) return pino(base, dest);
  if (opts.format === 'text') {
    // one line per entry (fields inline), so a terminal reads like a log and `grep` finds whole events
    return pino({ ...base, transport: { target: 'pino-pretty', options: { colorize: process.stdout.isTTY, translateTime: 'SYS:standard', singleLine: true, destination: 1 } } });
  }
  return pino(base);
}
