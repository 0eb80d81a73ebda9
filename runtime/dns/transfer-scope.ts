import type { Config } from '../config/types.js';
import { toFqdn } from '../tenancy/names.js';
import { SYSTEM_SCOPE, type TransferScope } from './zone-records.js';

/**
 * Whom each TSIG key transfers zones for (docs/dns.md "Who gets which records"): the key's own
 * `tenant` (`system`: the operator's key, the whole zone), else the tenant of its
 * `dns.update.grants` entry (that tenant's names). A key with neither is not in the map: a
 * transfer signed with it is REFUSED. Keys by lower-cased fully qualified name, as in the keyring.
 */
export function transferScopes(dns: Pick<Config['dns'], 'axfr' | 'update'>): Map<string, TransferScope> {
  const out = new Map<string, TransferScope>();
  for (const g of dns.update.grants) if (!out.has(toFqdn(g.key))) out.set(toFqdn(g.key), g.tenant);
  for (const k of dns.axfr.tsigKeys) if (k.tenant !== undefined) out.set(toFqdn(k.name), k.tenant);
  return out;
}

/** The keys of `dns.axfr.tsigKeys` that transfer nothing (no `tenant`, no grant), for the warning at start. */
export function keysWithoutScope(dns: Pick<Config['dns'], 'axfr' | 'update'>): string[] {
  const scopes = transferScopes(dns);
  return dns.axfr.tsigKeys.map((k) => toFqdn(k.name)).filter((n) => !scopes.has(n));
}

export { SYSTEM_SCOPE };
