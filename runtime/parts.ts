import type { FastifyInstance } from 'fastify';
import type { Core } from './app.js';
import type { ApiExtensions } from './api/server.js';

/** What a part can see once the API exists. */
export interface StartContext {
  api: FastifyInstance;
  /** the API's bound address when api.enabled, else undefined */
  apiAddress: { host: string; port: number } | undefined;
}

/**
 * A daemon part (DNS server, health checker, WebSocket feed, GitOps loop, alerts, cluster…).
 * `setup` runs before the API is built (register routes and authenticators); `start` runs after it
 * listens. Either may return a closer, run at shutdown in reverse order.
 */
export interface Part {
  name: string;
  setup?: (core: Core, ext: ApiExtensions) => Promise<void> | void;
  start?: (core: Core, ctx: StartContext) => Promise<(() => Promise<void> | void) | void> | (() => Promise<void> | void) | void;
}

/** Parts in start order. */
export const PARTS: Part[] = [];
