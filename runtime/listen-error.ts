import type { Config } from './config/types.js';

/** A listener the configuration asks for: the settings that choose it, its address and port. */
interface ConfiguredListener { settings: string; addr: string; port: number }

function configuredListeners(c: Config): ConfiguredListener[] {
  const out: ConfiguredListener[] = [{ settings: 'dns.listenAddr, dns.port', addr: c.dns.listenAddr, port: c.dns.port }];
  if (c.api.enabled) out.push({ settings: 'api.listenAddr, api.port', addr: c.api.listenAddr, port: c.api.port });
  if (c.metrics.enablePrometheus) out.push({ settings: 'metrics.listenAddr, metrics.port', addr: c.metrics.listenAddr, port: c.metrics.port });
  if (c.redirect.enabled && c.redirect.port !== undefined) out.push({ settings: 'redirect.listenAddr, redirect.port', addr: c.redirect.listenAddr, port: c.redirect.port });
  if (c.bgp?.enabled) out.push({ settings: 'bgp.listenAddr, bgp.listenPort', addr: c.bgp.listenAddr, port: c.bgp.listenPort });
  return out;
}

/**
 * One line for a listener that could not start because its address is taken or cannot be had
 * (EADDRINUSE, EADDRNOTAVAIL, EACCES), naming the address and the settings that chose it; undefined
 * for any other error. The daemon prints this instead of a stack trace.
 */
export function listenErrorLine(err: unknown, config: Config): string | undefined {
  const e = err as NodeJS.ErrnoException & { address?: string; port?: number };
  const code = e?.code ?? /\b(EADDRINUSE|EADDRNOTAVAIL|EACCES)\b/.exec(String(e?.message))?.[1];
  if (code !== 'EADDRINUSE' && code !== 'EADDRNOTAVAIL' && code !== 'EACCES') return undefined;
  const m = /(\S+):(\d+)\s*$/.exec(String(e.message));
  const port = typeof e.port === 'number' ? e.port : m ? Number(m[2]) : undefined;
  const addr = typeof e.address === 'string' ? e.address : m?.[1];
  const mine = configuredListeners(config).filter((l) => l.port === port && (addr === undefined || l.addr === addr || l.addr === '0.0.0.0' || l.addr === '::'));
  const where = `${addr ?? '?'}:${port ?? '?'}`;
  const settings = mine.length ? ` (${mine.map((l) => l.settings).join('; ')})` : '';
  const why = code === 'EADDRINUSE' ? 'is already in use; stop what holds it or choose another port'
    : code === 'EADDRNOTAVAIL' ? 'is not an address of this host; choose another listen address'
      : 'needs privileges this user lacks (ports below 1024 need root or CAP_NET_BIND_SERVICE); choose a port of 1024 or more';
  return `cannot listen on ${where}${settings}: ${why}`;
}
