import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { shown, WAIT_CEILING_MS } from './wait.js';

/** One request a Recorder received. */
export interface Recorded {
  method: string;
  /** path and query */
  url: string;
  headers: IncomingHttpHeaders;
  /** the raw body exactly as received (signatures are checked against it) */
  raw: string;
  json: any;
  /** Date.now() when the body was complete */
  at: number;
  /** status the recorder answered */
  status: number;
}

/**
 * A local HTTP receiver on 127.0.0.1, port 0, that records every request. `answer` picks the
 * status per request (1-based count), e.g. fail twice then accept.
 */
export class Recorder {
  readonly requests: Recorded[] = [];
  private server: Server | undefined;
  private waiters: (() => void)[] = [];
  constructor(public answer: (n: number, req: { method: string; url: string }) => number = () => 202) {}

  /** Starts listening; resolves with the base URL `http://127.0.0.1:<port>`. */
  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try { json = raw ? JSON.parse(raw) : undefined; } catch { json = undefined; }
        const status = this.answer(this.requests.length + 1, { method: req.method ?? '', url: req.url ?? '' });
        this.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, raw, json, at: Date.now(), status });
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ status: status < 300 ? 'success' : 'error' }));
        for (const w of this.waiters.splice(0)) w();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /**
   * Resolves once at least `n` requests arrived; rejects after `timeoutMs` (raised to
   * WAIT_CEILING_MS) naming `what` and the requests that did arrive.
   */
  async waitFor(n: number, timeoutMs = WAIT_CEILING_MS, what = 'requests'): Promise<Recorded[]> {
    const deadline = Date.now() + Math.max(timeoutMs, WAIT_CEILING_MS);
    while (this.requests.length < n) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`recorder: waiting for ${what}, wanted ${n} requests, got ${this.requests.length}: ${shown(this.requests.map((r) => `${r.method} ${r.url} -> ${r.status}`))}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => { clearTimeout(t); resolve(); });
      });
    }
    return this.requests;
  }

  /** Stops the server, dropping kept-alive connections. */
  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = undefined;
  }
}
