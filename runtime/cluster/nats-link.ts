import { connect, type NatsConnection, type NodeConnectionOptions } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV, type KvOptions } from '@nats-io/kv';
import { Objm, type ObjectStore } from '@nats-io/obj';
import type { Logger } from '../log/logger.js';
import type { ClusterMetrics } from './metrics.js';
import { backoffDelay } from './connect-options.js';

/** Called when the link is (re)connected; `first` on the first connection of this process. */
export type ReadyHandler = (first: boolean) => Promise<void> | void;

/**
 * The node's one NATS connection and its JetStream and KV handles. Connects in the background
 * (the daemon starts and serves without the bus), reconnects forever with backoff, and runs the
 * registered ready handlers after each (re)connection, retrying a failing handler with backoff.
 * `up` is false while disconnected; callers then skip bus work and rely on catch-up.
 */
export class NatsLink {
  nc: NatsConnection | undefined;
  js: JetStreamClient | undefined;
  jsm: JetStreamManager | undefined;
  up = false;
  private kvm: Kvm | undefined;
  private readonly buckets = new Map<string, Promise<KV>>();
  private readonly objectStores = new Map<string, Promise<ObjectStore>>();
  private readonly handlers: ReadyHandler[] = [];
  private closed = false;
  private first = true;
  private readyRun = 0;
  private readonly firstDelay = backoffDelay(500, 8_000);

  constructor(
    private readonly opts: NodeConnectionOptions,
    private readonly domain: string | undefined,
    private readonly log: Logger,
    private readonly metrics: ClusterMetrics,
  ) {}

  /** Registers a handler run after every (re)connection. */
  onReady(fn: ReadyHandler): void {
    this.handlers.push(fn);
  }

  /** Starts connecting in the background. */
  start(): void {
    void this.connectLoop();
  }

  private async connectLoop(): Promise<void> {
    try {
      const nc = await connect(this.opts);
      if (this.closed) { await nc.close(); return; }
      this.nc = nc;
      const jsOpts = this.domain ? { domain: this.domain } : {};
      this.js = jetstream(nc, jsOpts);
      this.jsm = await jetstreamManager(nc, { ...jsOpts, checkAPI: false });
      this.kvm = new Kvm(this.js);
      this.setUp(true, nc.getServer());
      void this.watchStatus(nc);
    } catch (err) {
      if (this.closed) return;
      const wait = this.firstDelay();
      this.log.warn({ err, retryInMs: wait }, 'nats connect failed; serving from local state and retrying');
      setTimeout(() => void this.connectLoop(), wait).unref();
    }
  }

  private async watchStatus(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') this.setDown(s.server);
      else if (s.type === 'reconnect') this.setUp(false, s.server);
    }
  }

  private setDown(server: string): void {
    if (!this.up) return;
    this.up = false;
    this.metrics.connected.set(0);
    this.log.warn({ server }, 'nats disconnected; serving from local state');
  }

  private setUp(first: boolean, server: string): void {
    this.up = true;
    this.metrics.connected.set(1);
    this.log.info({ server, first }, 'nats connected');
    void this.runHandlers(first && this.first);
    this.first = false;
  }

  /** Runs every handler at once (a slow one must not hold the others back), each retried alone. */
  private async runHandlers(first: boolean): Promise<void> {
    const run = ++this.readyRun;
    await Promise.all(this.handlers.map(async (h) => {
      for (let attempt = 0; !this.closed && run === this.readyRun; attempt++) {
        try { await h(first); return; } catch (err) {
          this.log.warn({ err, attempt }, 'cluster setup step failed; retrying');
          await sleep(Math.min(5_000, 250 * 2 ** attempt));
          if (!this.up) return; // the next reconnect runs the handlers again
        }
      }
    }));
  }

  /**
   * JetStream replicas for the streams and buckets this node creates: 3 when the server reports at
   * least three servers in its cluster, else 1.
   */
  replicas(): number {
    const info = this.nc?.info;
    const peers = 1 + (info?.connect_urls?.length ?? 0);
    return info?.cluster && peers >= 3 ? 3 : 1;
  }

  /** Opens (creating when absent) a KV bucket; cached per name. Throws when the bus is down. */
  bucket(name: string, opts: Partial<KvOptions> = {}): Promise<KV> {
    let p = this.buckets.get(name);
    if (!p) {
      const kvm = this.kvm;
      if (!kvm) return Promise.reject(new Error('nats not connected'));
      p = (async () => {
        try {
          return await kvm.create(name, { history: 1, replicas: this.replicas(), ...opts });
        } catch (err) {
          // a bucket made earlier with other limits (e.g. another TTL) is used as it is
          this.log.debug({ err, bucket: name }, 'kv create failed; opening the existing bucket');
          return await kvm.open(name);
        }
      })();
      p.catch(() => this.buckets.delete(name));
      this.buckets.set(name, p);
    }
    return p;
  }

  /**
   * Opens (creating when absent, with `replicas()` and no TTL) a JetStream object store; cached
   * per name. An existing store is used as it is. Throws when the bus is down.
   */
  objectStore(name: string): Promise<ObjectStore> {
    let p = this.objectStores.get(name);
    if (!p) {
      const js = this.js;
      if (!js) return Promise.reject(new Error('nats not connected'));
      p = new Objm(js).create(name, { replicas: this.replicas() });
      p.catch(() => this.objectStores.delete(name));
      this.objectStores.set(name, p);
    }
    return p;
  }

  /** Closes the connection (drains pending publishes). */
  async close(): Promise<void> {
    this.closed = true;
    const nc = this.nc;
    this.up = false;
    this.metrics.connected.set(0);
    if (nc && !nc.isClosed()) {
      // drain sends what is pending (the goodbye heartbeat); with the server away it could wait
      // for a long time, so shutdown gives it 2 s
      await Promise.race([nc.drain().catch(() => undefined), sleep(2_000)]);
      if (!nc.isClosed()) await nc.close().catch(() => undefined);
    }
  }
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}
