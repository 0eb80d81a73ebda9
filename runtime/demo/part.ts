import type { Core } from '../app.js';
import { PARTS } from '../parts.js';
import { GslbError } from '../errors.js';
import { logListening } from '../log/listening.js';
import { DemoBackend } from './backend.js';
import type { DemoOptions } from './options.js';
import { demoRoutes } from './routes.js';

declare module '../ports/parts.js' {
  interface Ports {
    /** set by `gslbd --demo` before any part runs: the demo backends to start */
    demo?: DemoOptions;
  }
}

// Per core, so several daemons in one process (tests) do not share backends.
const running = new WeakMap<Core, DemoBackend[]>();

/**
 * The demo part (`gslbd --demo`, docs/demo.md): when `core.ports.demo` ({@link DemoOptions}) is set
 * before setup, starts one small HTTP backend per entry and the routes that stop and start them
 * (runtime/demo/routes.ts). Without it the part does nothing. It is registered first, so the
 * backends listen before the health part sends its first probes. A backend that cannot listen
 * stops startup with an error naming its address.
 */
PARTS.push({
  name: 'demo',
  setup(core, ext) {
    const opts = core.ports.demo;
    if (!opts) return;
    const backends = opts.backends.map((spec) => new DemoBackend(spec));
    running.set(core, backends);
    const log = core.log.child({ component: 'demo' });
    ext.apiPlugins.push(async (app) => { await app.register(demoRoutes(backends, log)); });
  },
  async start(core) {
    const backends = running.get(core);
    if (!backends) return;
    const log = core.log.child({ component: 'demo' });
    const stopAll = async () => { for (const b of backends) await b.stop(); };
    for (const b of backends) {
      try {
        await b.start();
      } catch (err) {
        await stopAll();
        const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
        throw new GslbError('CONFIG_INVALID', `--demo: backend ${b.name} cannot listen on ${b.address} (${code}); is another gslbd --demo running? --demo-backends picks other addresses (docs/demo.md)`, { cause: err });
      }
      logListening(log, `demo ${b.name}`, b.host, b.port);
    }
    log.warn({ backends: backends.map((b) => b.name) }, 'demo backends started (gslbd --demo): for trying gslbd out, not for production');
    return stopAll;
  },
});
