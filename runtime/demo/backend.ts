import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostPort } from '../log/listening.js';
import type { DemoBackendSpec } from './options.js';

/** The public state of a demo backend, as the REST routes return it. */
export interface DemoBackendState {
  name: string;
  address: string;
  running: boolean;
}

/**
 * A tiny HTTP backend for the demo: while running, every GET or HEAD answers 200 with a body naming
 * the backend (`demo-1 at 127.0.0.10:8081`), so an http health check on any path passes and `curl`
 * shows who answered; other methods get 405. `stop` closes the listening socket and every open
 * connection, so a health check sees a refused connection, as it would for a crashed server;
 * `start` listens again on the same address. Both are idempotent.
 */
export class DemoBackend {
  readonly name: string;
  readonly host: string;
  private boundPort: number;
  private server: Server | undefined;
  /** start and stop run one at a time (two REST calls at once must not both listen) */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(spec: DemoBackendSpec) {
    this.name = spec.name;
    this.host = spec.host;
    this.boundPort = spec.port;
  }

  /** The port: the one given, or the one bound when 0 was given and the backend has started. */
  get port(): number {
    return this.boundPort;
  }

  get running(): boolean {
    return this.server !== undefined;
  }

  get address(): string {
    return hostPort(this.host, this.boundPort);
  }

  state(): DemoBackendState {
    return { name: this.name, address: this.address, running: this.running };
  }

  /** Listens on the backend's address. Rejects with the socket error (EADDRINUSE, EADDRNOTAVAIL). */
  start(): Promise<void> {
    return this.serialise(() => this.listen());
  }

  /** Closes the listener and drops open connections; resolves once the socket is closed. */
  stop(): Promise<void> {
    return this.serialise(() => this.close());
  }

  private serialise(op: () => Promise<void>): Promise<void> {
    const next = this.queue.then(op, op);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async listen(): Promise<void> {
    if (this.server) return;
    const server = createServer((req, res) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'x-demo-backend': this.name });
      res.end(req.method === 'HEAD' ? undefined : `${this.name} at ${this.address}\n`);
    });
    // health checks open a connection per probe; do not hold idle ones open for long
    server.keepAliveTimeout = 1000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.boundPort, this.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.boundPort = (server.address() as AddressInfo).port;
    this.server = server;
  }

  private async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}
