import type { FastifyInstance } from 'fastify';
import type { Config } from './config/types.js';
import { createCore, type Core } from './app.js';
import { createLogger, type Logger } from './log/logger.js';
import { configWarnings } from './config/load.js';
import { buildApi, createExtensions } from './api/server.js';
import { PARTS, type Part } from './parts.js';
import { logListening } from './log/listening.js';
import type { PortSeed, Ports } from './ports/parts.js';
import { logStopReport, stopInOrder, type StopOptions, type StopReport, type StopStep } from './shutdown.js';

export interface Daemon {
  core: Core;
  api: FastifyInstance;
  apiAddress: { host: string; port: number } | undefined;
  /** what parts publish about themselves (e.g. the DNS port actually bound): `core.ports` */
  ports: Ports;
  /**
   * Stops every part, last started first, each within its bound (runtime/shutdown.ts). Resolves
   * with the parts that did not stop in time; never rejects. Calling it again stops nothing more.
   */
  close: () => Promise<StopReport>;
}

/**
 * Starts gslbd from a validated config: storage and state, every part's setup, the API (when
 * api.enabled), then every part's start. `close` stops everything in reverse order. Used by
 * `gslbd` and by the integration tests (with ports set to 0). `opts.ports` seeds `core.ports` before
 * any setup (command-line choices parts read, e.g. `demo` for runtime/demo). `core.ports.started` is
 * false until every part has started (GET /api/v1/health answers `starting` until then).
 * Every closer is filed under the part that registered it (during its setup or start), so a
 * shutdown can say which part did not stop; `opts.stop` changes the bounds (tests).
 */
export async function startDaemon(config: Config, opts: { log?: Logger; env?: NodeJS.ProcessEnv; parts?: Part[]; ports?: PortSeed; stop?: Pick<StopOptions, 'partMs' | 'totalMs'> } = {}): Promise<Daemon> {
  const log = opts.log ?? createLogger(config.logging);
  // once per start: keys of the file that were renamed (runtime/config/renamed-keys.ts)
  for (const w of configWarnings(config)) log.warn({ detail: w.message, ...(w.file ? { file: w.file, line: w.line } : {}) }, 'deprecated configuration key');
  const core = createCore(config, log, opts.env ?? process.env);
  const parts = opts.parts ?? PARTS;
  const ext = createExtensions();
  const ports = core.ports;
  Object.assign(ports, opts.ports, { started: false });
  // the core's own closer (flush health status, close the database) stops last
  const steps: StopStep[] = [{ part: 'store', closers: core.closers.splice(0) }];
  const file = (part: string, closer?: (() => Promise<void> | void) | void) => {
    const closers = core.closers.splice(0);
    if (closer) closers.push(closer);
    if (closers.length) steps.push({ part, closers });
  };
  const stopAll = () => {
    file('core'); // anything registered after start
    return stopInOrder(steps.splice(0), {
      ...opts.stop,
      onError: (part, err) => log.error({ err, part }, 'shutdown step failed'),
      onStopped: (part, ms) => log.debug({ part, ms }, 'part stopped'),
    });
  };
  try {
    for (const p of parts) {
      await p.setup?.(core, ext);
      file(p.name);
    }
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
    file('api', () => api.close());
    for (const p of parts) file(p.name, await p.start?.(core, { api, apiAddress }));
    ports.started = true;
    if (core.systemKey === undefined) log.warn('GSLB_API_KEY is unset: dev mode, every API request is a system admin');
    return { core, api, apiAddress, ports, close: stopAll };
  } catch (err) {
    const r = await stopAll();
    if (r.notStopped.length) logStopReport(log, r);
    throw err;
  }
}
