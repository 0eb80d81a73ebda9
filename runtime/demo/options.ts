import { isIP } from 'node:net';

/** One demo backend: its name (`demo-1`, `demo-2` …, in the order given) and where it listens. */
export interface DemoBackendSpec {
  name: string;
  host: string;
  port: number;
}

/** What `gslbd --demo` starts (`core.ports.demo`, read by runtime/demo/part.ts). */
export interface DemoOptions {
  backends: DemoBackendSpec[];
}

/**
 * The default backends: the members of examples/config-repo and the static endpoints of
 * examples/config.yaml. Linux routes all of 127.0.0.0/8 to the loopback interface, so these
 * addresses need no setup there.
 */
export const DEFAULT_DEMO_BACKENDS = '127.0.0.10:8081,127.0.0.11:8081';

/**
 * Parses `--demo-backends`: a comma-separated list of `IPv4:port` or `[IPv6]:port`, named `demo-1`,
 * `demo-2` … in order. Throws an Error naming the bad entry (the caller reports it as a usage
 * error): not an IP literal, a port outside 1..65535, an address given twice, or an empty list.
 */
export function parseDemoBackends(spec: string): DemoBackendSpec[] {
  const entries = spec.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (entries.length === 0) throw new Error('--demo-backends: give at least one IP:port');
  const seen = new Set<string>();
  return entries.map((entry, i) => {
    const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(entry);
    const host = m?.[1] ?? m?.[2];
    const port = Number(m?.[3]);
    if (!host || isIP(host) === 0) throw new Error(`--demo-backends: "${entry}" is not IP:port (an IPv6 address goes in brackets)`);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`--demo-backends: "${entry}": the port must be 1..65535`);
    const key = `${host}|${port}`;
    if (seen.has(key)) throw new Error(`--demo-backends: "${entry}" is given twice`);
    seen.add(key);
    return { name: `demo-${i + 1}`, host, port };
  });
}
