import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/** Keys whose values are never written to a log line. */
export const REDACT_PATHS = [
  'password', '*.password', 'secret', '*.secret', 'token', '*.token', 'clientSecret', '*.clientSecret',
  'apiKey', '*.apiKey', 'routingKey', '*.routingKey', 'totpCode', '*.totpCode',
  // secret fields of user and apikey rows (runtime/model/kinds.ts), should a row ever be logged
  'passwordHash', '*.passwordHash', 'totpSecret', '*.totpSecret', 'totpPending', '*.totpPending', 'keyHash', '*.keyHash',
  'req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie',
];

/**
 * The root pino logger. `format: text` pretty-prints for a terminal; `json` writes one JSON object
 * per line. Secrets are redacted by key.
 */
export function createLogger(opts: { format: 'json' | 'text'; level: string }, dest?: DestinationStream): Logger {
  const base = { level: opts.level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { pid: process.pid } };
  if (dest) return pino(base, dest);
  if (opts.format === 'text') {
    return pino({ ...base, transport: { target: 'pino-pretty', options: { colorize: process.stdout.isTTY, translateTime: 'SYS:standard', destination: 1 } } });
  }
  return pino(base);
}
