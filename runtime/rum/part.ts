import { PARTS } from '../parts.js';
import type { Core } from '../app.js';
import { createRumRuntime, type RumRuntime, type RumShare } from './runtime.js';
import { rumRoutes, rumScriptRoute } from './routes.js';

declare module '../ports/parts.js' {
  interface Ports {
    /** the RUM store, limiter and licence check (tests and /rum/status read it) */
    rum?: RumRuntime;
  }
}

/** How often expired subnets are swept out of the store. */
const SWEEP_MS = 60_000;

/** true when the licence allows RUM (the pro tier or above), else the tier the server runs. */
function licensedFor(core: Core): () => true | string {
  return () => {
    const lic = core.ports.license;
    if (!lic) return 'free';
    return lic.hasTier('pro') ? true : lic.current().tier;
  };
}

/**
 * The RUM part (gslb-api.md §2, §4, §7, §8; docs/rum.md): `/rum.js`, `/api/v1/rum/*`, the subnet
 * store plugged into the DNS `rum` step, and, in a cluster, samples shared on `svc.rum.<cluster>`.
 */
PARTS.push({
  name: 'rum',
  setup(core, ext) {
    let share: (msg: Omit<RumShare, 'node'>) => void = () => undefined;
    const r = createRumRuntime({ licensed: licensedFor(core), share: (m) => share(m), limits: () => core.ports.sharedLimits });
    const cluster = core.ports.cluster;
    if (cluster) share = cluster.channel<RumShare>('rum', (m) => r.receive(m));
    core.ports.rum = r;
    core.ports.setRumSource?.(r.store);
    const routes = rumRoutes(core, r);
    ext.apiPlugins.push(async (app) => { await app.register(routes); });
    ext.rootPlugins.push(rumScriptRoute);
  },
  start(core) {
    const r = core.ports.rum;
    if (!r) return;
    const timer = setInterval(() => r.store.sweep(), SWEEP_MS);
    timer.unref();
    return () => clearInterval(timer);
  },
});
