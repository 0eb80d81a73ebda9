import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real git smart-HTTP server for tests: `git http-backend` (CGI) behind a node http server on
 * 127.0.0.1:0, serving every repository under `root`. With `token`, requests need basic auth whose
 * password is the token (401 otherwise), like a hosted git service. Counts requests.
 */
export interface GitHttpServer { url: string; requests: number; close: () => Promise<void> }

export async function startGitHttpServer(root: string, opts: { token?: string } = {}): Promise<GitHttpServer> {
  const state = { requests: 0 };
  const server: Server = createServer((req, res) => {
    state.requests++;
    if (opts.token) {
      const auth = req.headers.authorization ?? '';
      const m = /^Basic (.+)$/.exec(auth);
      const pass = m ? Buffer.from(m[1]!, 'base64').toString().split(':').slice(1).join(':') : '';
      if (pass !== opts.token) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="git"' });
        res.end('unauthorized');
        return;
      }
    }
    const u = new URL(req.url ?? '/', 'http://x');
    const child = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH, GIT_PROJECT_ROOT: root, GIT_HTTP_EXPORT_ALL: '1', PATH_INFO: decodeURIComponent(u.pathname),
        QUERY_STRING: u.search.slice(1), REQUEST_METHOD: req.method ?? 'GET', CONTENT_TYPE: req.headers['content-type'] ?? '',
        HTTP_CONTENT_ENCODING: String(req.headers['content-encoding'] ?? ''), GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
        REMOTE_ADDR: '127.0.0.1', SERVER_PROTOCOL: 'HTTP/1.1',
      },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    req.pipe(child.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) { res.write(chunk); return; }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString().split('\r\n')) {
        const i = line.indexOf(':');
        if (i < 0) continue;
        const k = line.slice(0, i).trim();
        const v = line.slice(i + 1).trim();
        if (k.toLowerCase() === 'status') status = parseInt(v, 10);
        else headers[k] = v;
      }
      res.writeHead(status, headers);
      res.write(head.subarray(end + 4));
    });
    child.on('close', () => { if (!headersDone) res.writeHead(500); res.end(); });
    child.on('error', () => { if (!headersDone) res.writeHead(500); res.end(); });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() { return state.requests; },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
