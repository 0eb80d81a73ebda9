import type { FastifyInstance } from 'fastify';
import type { Config } from './config/types.js';
import { createCore, type Core } from './app.js';
import { createLogger, type Logger } from './log/logger.js';
import { buildApi, createExtensions } from './api/server.js';
import { PARTS, type Part } from './parts.js';
import { logListening } from './log/listening.js';
import type { PortSeed, Ports } from './ports.js';

export interface Daemon {
  core: Core;
  api: FastifyInstance;
  apiAddress: { host: string; port: number } | undefined;
  /** what parts publish about themselves (e.g. the DNS port actually bound): `core.ports` */
  ports: Ports;
  close: () => Promise<void>;
}

/**
 * Starts gslbd from a validated config: storage and state, every part's setup, the API (when
 * api.enabled), then every part's start. `close` stops everything in reverse order. Used by
 * `gslbd` and by the integration tests (with ports set to 0). `opts.ports` seeds `core.ports` before
 * any setup (command-line choices parts read, e.g. `demo` for runtime/demo). `core.ports.started` is
 * false until every part has started (GET /api/v1/health answers `starting` until then).
 */
export async function startDaemon(config: Config, opts: { log?: Logger; env?: NodeJS.ProcessEnv; parts?: Part[]; ports?: PortSeed } = {}): Promise<Daemon> {
  const log = opts.log ?? createLogger(config.logging);
  const core = createCore(config, log, opts.env ?? process.env);
  const parts = opts.parts ?? PARTS;
  const ext = createExtensions();
  const ports = core.ports;
  Object.assign(ports, opts.ports, { started: false });
  try {
    for (const p of parts) await p.setup?.(core, ext);
    const api = await buildApi(core, ext);
    let apiAddress: Daemon['apiAddress'];
    if (config.api.enabled) {
      await api.listen({ host: config.api.listenAddr, port: config.api.port });
      const addr = api.server.address();
      if (addr && typeof addr === 'object') apiAddress = { host: addr.address, port: addr.port };
      if (apiAddress) logListening(log, 'api', apiAddress.host, apiAddress.port);
    } else {
      await api.ready();
    }
    core.closers.push(() => api.close());
    for (const p of parts) {
      const closer = await p.start?.(core, { api, apiAddress });
      if (closer) core.closers.push(closer);
    }
    ports.started = true;
    if (core.systemKey === undefined) log.warn('GSLB_API_KEY is unset: dev mode, every API request is a system admin');
    const close = async () => {
      for (const c of core.closers.splice(0).reverse()) {
        try { await c(); } catch (err) { log.error({ err }, 'shutdown step failed'); }
      }
    };
    return { core, api, apiAddress, ports, close };
  } catch (err) {
    for (const c of core.closers.splice(0).reverse()) { try { await c(); } catch { /* already failing */ } }
    throw err;
  }
}
