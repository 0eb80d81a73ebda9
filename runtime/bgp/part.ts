import { PARTS } from '../parts.js';
import { REAL_TIMERS } from '../timers.js';
import { logListening } from '../log/listening.js';
import { Announcer } from './announcer.js';
import { BgpSpeaker } from './speaker.js';
import { createBgpMetrics } from './metrics.js';
import { speakerConfigOf } from './settings.js';
import { bgpRoutes } from './routes.js';
import type { BgpStatusSource } from './status.js';

declare module '../ports/parts.js' {
  interface Ports {
    /** the bound BGP listener port, when bgp.enabled */
    bgpPort?: number;
    /** the speaker's sessions and the pools' verdicts (GET /api/v1/bgp reads it) */
    bgp?: BgpStatusSource;
  }
}

/**
 * How long shutdown waits for the withdrawals and Cease NOTIFICATIONs to be delivered before the
 * sockets are destroyed; well inside the daemon's bound of one part (runtime/shutdown.ts PART_STOP_MS).
 */
const CEASE_WAIT_MS = 3000;
/** How often the health view's version is compared, for changes a cluster health policy makes without a local flip. */
const POLL_MS = 1000;

/**
 * The BGP part (docs/bgp.md). Always serves GET /api/v1/bgp. With `bgp.enabled`: listens on
 * `bgp.listenAddr:listenPort` (the bound port in `core.ports.bgpPort`), connects to every peer,
 * announces `bgp.nodePrefixes` and the prefixes of healthy pools, re-evaluated on every health
 * flip and plan apply; at shutdown withdraws everything and ends the sessions with Cease before
 * the DNS and health parts stop (closers run in reverse start order).
 */
PARTS.push({
  name: 'bgp',
  setup: (core, ext) => { ext.apiPlugins.push(bgpRoutes(core)); },
  start: async (core) => {
    const b = core.config.bgp;
    if (!b.enabled) return;
    const log = core.log.child({ component: 'bgp' });
    const cfg = speakerConfigOf(b);
    let speaker: BgpSpeaker | undefined;
    const metrics = createBgpMetrics(core.metrics, {
      peers: () => (speaker?.status() ?? []).map((p) => ({ peer: p.remoteAddr, state: p.state, announced: p.prefixesAnnounced.length })),
    });
    speaker = new BgpSpeaker(cfg, REAL_TIMERS, log, metrics);
    const announcer = new Announcer({ ...core, log }, b.nodePrefixes, b.poolPrefixes, speaker);
    const port = await speaker.listen();
    core.ports.bgpPort = port;
    logListening(core.log, 'bgp', cfg.listenAddr, port);
    announcer.evaluate();
    speaker.start();
    const offs = [
      core.bus.on('health_transition', () => announcer.schedule()),
      core.bus.on('plan_applied', () => announcer.schedule()),
    ];
    const poll = setInterval(() => announcer.evaluateIfChanged(), POLL_MS).unref();
    const s = speaker;
    core.ports.bgp = { config: cfg, listenPort: port, peers: () => s.status(), pools: () => announcer.pools(), announced: () => s.announced() };
    return async () => {
      for (const off of offs) off();
      clearInterval(poll);
      await s.stop(CEASE_WAIT_MS);
      log.info('bgp stopped: prefixes withdrawn, sessions closed');
    };
  },
});
