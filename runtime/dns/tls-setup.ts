import { createSecureContext, type SecureContext } from 'node:tls';
import type { Config } from '../config/types.js';
import { loadTlsPair } from '../crypto/tls-pair.js';
import { GslbError } from '../errors.js';

/** The DNS-over-TLS listener's address, port and TLS context. */
export interface DnsTlsListener { listenAddr: string; port: number; context: SecureContext }

/**
 * The listener of `dns.tls` (docs/dns.md "Zone transfers over TLS"), or undefined when it is not
 * configured. TLS 1.3 only (RFC 9103 §9: XoT needs TLS 1.3). The files were checked at load time
 * (runtime/config/load.ts); a pair that changed since is a startup error naming the key.
 */
export function createDnsTls(dns: Config['dns']): DnsTlsListener | undefined {
  const t = dns.tls;
  if (!t) return undefined;
  const { pair, problems } = loadTlsPair(t, ['dns', 'tls']);
  if (!pair) throw new GslbError('CONFIG_INVALID', `dns.tls: ${problems.map((p) => `${p.path.join('.')} = ${String(p.value)}: ${p.rule}`).join('; ')}`);
  return { listenAddr: t.listenAddr ?? dns.listenAddr, port: t.port, context: createSecureContext({ cert: pair.cert, key: pair.key, minVersion: 'TLSv1.3' }) };
}
