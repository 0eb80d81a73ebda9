import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startHttpMember, stopHttpMember } from './http-member.js';

/**
 * HTTP backends answering 200 on one port at each of `ips` (loopback addresses): the static
 * endpoints share the port of the file's health check (`health.port`). The port is one the first
 * address got from the system, tried again with a new one when another address has it in use.
 */
export async function startStaticBackends(ips: readonly string[]): Promise<{ port: number; servers: Map<string, Server> }> {
  for (let attempt = 0; ; attempt++) {
    const servers = new Map<string, Server>();
    const first = await startHttpMember(ips[0]!);
    servers.set(ips[0]!, first);
    const port = (first.address() as AddressInfo).port;
    try {
      for (const ip of ips.slice(1)) servers.set(ip, await startHttpMember(ip, port));
      return { port, servers };
    } catch (err) {
      for (const s of servers.values()) await stopHttpMember(s);
      if (attempt >= 20 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    }
  }
}
