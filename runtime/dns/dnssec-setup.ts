import type { Config } from '../config/types.js';
import type { Logger } from '../log/logger.js';
import { parseDuration } from '../config/duration.js';
import { GslbError } from '../errors.js';
import { DnssecResponder } from './dnssec-answer.js';
import { loadDnssecKeys } from '../crypto/dnssec-keys.js';

/**
 * The DNSSEC signer of `dns.dnssec` (docs/dns.md "DNSSEC"), for the main thread and for each DNS
 * worker thread (each reads the same key files and keeps its own RRSIG cache). The configuration
 * was checked at load time (runtime/config/load.ts reads the key files too); a key file that
 * changed since is a startup error. Logs each key's tag, role and state once per thread, never its
 * private part.
 */
export function createDnssec(cfg: Config['dns']['dnssec'], log: Logger): DnssecResponder {
  const { keys, problems } = loadDnssecKeys(cfg);
  if (problems.length > 0) throw new GslbError('CONFIG_INVALID', `dns.dnssec: ${problems.map((p) => `${p.path.join('.')}: ${p.rule}`).join('; ')}`);
  log.info({ algorithm: cfg.algorithm, keys: keys.map((k) => ({ tag: k.tag, role: k.role, state: k.state })) }, 'dnssec signing');
  return new DnssecResponder(keys, { validity: Math.floor((parseDuration(cfg.signatureValidity) ?? 7 * 86_400_000) / 1000), cacheSize: cfg.cacheSize, now: Date.now });
}
