import { createServer, type Server } from 'node:http';

/** Starts a pool member on `ip:port` (0: a free port) that answers every request 200 `ok`. */
export function startHttpMember(ip: string, port = 0): Promise<Server> {
  const srv = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
  return new Promise((resolve, reject) => { srv.once('error', reject); srv.listen(port, ip, () => resolve(srv)); });
}

/** Stops a member started by startHttpMember, dropping its open connections; no-op for undefined. */
export async function stopHttpMember(srv: Server | undefined): Promise<void> {
  if (!srv) return;
  srv.closeAllConnections();
  await new Promise<void>((r) => srv.close(() => r()));
}
