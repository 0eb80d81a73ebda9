import { readFileSync } from 'node:fs';
import { credsAuthenticator, nkeyAuthenticator, type NodeConnectionOptions } from '@nats-io/transport-node';
import type { Config } from '../config/types.js';

/**
 * NATS connection options from `state.nats` (gslb-config-auth.md §2): servers, TLS files, one of
 * user/password, nkey seed file or credentials file. Reconnects forever with backoff (2 s wait plus
 * jitter) once connected; the first connection is retried by `NatsLink` (so it can be cancelled at
 * shutdown). Either way the node serves from local state while the bus is away. Throws when a named file cannot be read.
 */
export function connectOptions(config: Config): NodeConnectionOptions {
  const n = config.state.nats;
  const opts: NodeConnectionOptions = {
    servers: n.servers,
    name: `gslbd/${config.cluster.id}/${config.node.id}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    reconnectJitter: 250,
    // backoff: 0.5 s, doubling to 8 s, plus jitter (the client calls this between attempts)
    reconnectDelayHandler: backoffDelay(),
    pingInterval: 5_000,
    maxPingOut: 2,
    timeout: 5_000,
  };
  if (n.tls.caFile || n.tls.certFile || n.tls.keyFile) {
    opts.tls = { ...(n.tls.caFile ? { caFile: n.tls.caFile } : {}), ...(n.tls.certFile ? { certFile: n.tls.certFile } : {}), ...(n.tls.keyFile ? { keyFile: n.tls.keyFile } : {}) };
  }
  const a = n.auth;
  if (a.credsFile) opts.authenticator = credsAuthenticator(new Uint8Array(readFileSync(a.credsFile)));
  else if (a.nkeySeedFile) opts.authenticator = nkeyAuthenticator(new TextEncoder().encode(readFileSync(a.nkeySeedFile, 'utf8').trim()));
  else if (a.user !== undefined) { opts.user = a.user; if (a.password !== undefined) opts.pass = a.password; }
  return opts;
}

/** Exponential reconnect delay with jitter, capped; resets after a quiet minute. */
export function backoffDelay(baseMs = 500, capMs = 8_000, random: () => number = Math.random, now: () => number = Date.now): () => number {
  let attempt = 0;
  let last = 0;
  return () => {
    const t = now();
    if (t - last > 60_000) attempt = 0;
    last = t;
    const d = Math.min(capMs, baseMs * 2 ** attempt);
    attempt++;
    return Math.round(d / 2 + random() * (d / 2));
  };
}
