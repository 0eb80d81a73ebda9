import { Resolver } from 'node:dns/promises';

/** What a TXT lookup found: the record's strings (each record's chunks joined), or why there are none. */
export type TxtLookup = { values: string[] } | { error: string };

/**
 * Looks up the TXT records of a name through `servers` (`host` or `host:port`, IPv6 in brackets),
 * or the system's resolver when none are given, within `timeoutMs`. Never throws.
 */
export async function lookupTxt(name: string, servers: readonly string[], timeoutMs: number): Promise<TxtLookup> {
  const r = new Resolver({ timeout: timeoutMs, tries: 2 });
  if (servers.length > 0) r.setServers([...servers]);
  try {
    const records = await r.resolveTxt(name);
    return { values: records.map((chunks) => chunks.join('')) };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { error: code === 'ENOTFOUND' || code === 'ENODATA' ? 'no TXT record' : `lookup failed (${code ?? (err as Error).message})` };
  }
}
