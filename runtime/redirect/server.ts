import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { answerRedirect } from './answer.js';
import { requestHost } from './host-index.js';
import type { RedirectRow } from './rules.js';

/** What the listener needs: the rule for a host, read from the current snapshot on every request. */
export interface RedirectServerOptions {
  host: string;
  port: number;
  /** the rule answering a host (lower case, no port), or undefined */
  lookup: (host: string) => RedirectRow | undefined;
  /** called once per answer with its status (metrics) */
  onAnswer?: (status: number) => void;
  /** the whole request, headers and body, must arrive within this (ms) */
  requestTimeoutMs?: number;
  /** the headers must arrive within this (ms) */
  headersTimeoutMs?: number;
}

function send(res: ServerResponse, req: IncomingMessage, status: number, headers: Record<string, string>, text: string): void {
  const body = Buffer.from(text);
  res.writeHead(status, { ...headers, 'content-type': 'text/plain; charset=utf-8', 'content-length': String(body.length), 'x-content-type-options': 'nosniff' });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/**
 * The HTTP redirect listener (docs/redirects.md): plain HTTP/1.1, any method, answers 301, 302,
 * 307 or 308 with `Location` for a host with a rule, 404 for any other host, 400 for a request it
 * cannot parse. A request body is never read (it is discarded). Never throws out of a request.
 * Resolves once listening, with the port actually bound (port 0 picks one).
 */
export async function startRedirectServer(o: RedirectServerOptions): Promise<{ server: Server; port: number; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    let status = 500;
    try {
      const host = requestHost(req.headers.host, req.url);
      const rule = host === undefined ? undefined : o.lookup(host);
      if (!rule) {
        status = 404;
        send(res, req, status, { 'cache-control': 'no-store' }, 'no redirect rule for this host\n');
      } else {
        const a = answerRedirect(rule, req.method ?? 'GET', req.url ?? '/');
        status = a.status;
        send(res, req, status, { location: a.location, 'cache-control': a.cacheControl }, `Redirecting to ${a.location}\n`);
      }
    } catch {
      // a target no header can carry, or a rule the schema should have refused: answer, never crash
      if (!res.headersSent) send(res, req, (status = 400), { 'cache-control': 'no-store' }, 'bad request\n');
      else res.destroy();
    }
    o.onAnswer?.(status);
  });
  server.requestTimeout = o.requestTimeoutMs ?? 10_000;
  server.headersTimeout = o.headersTimeoutMs ?? 5_000;
  server.keepAliveTimeout = 5_000;
  server.maxHeadersCount = 100;
  server.on('clientError', (_err: Error, socket: Socket) => {
    // malformed requests and timeouts: a short 400 when the socket still takes it, then close
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    else socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const close = () => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return { server, port: (server.address() as AddressInfo).port, close };
}
