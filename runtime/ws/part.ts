import { PARTS } from '../parts.js';
import type { Core } from '../app.js';
import type { Snapshot } from '../../core/snapshot/snapshot.js';
import { WsHub, type WsClient } from './hub.js';
import { WsTokens } from './token.js';
import { wsRoutes } from './routes.js';
import { messageTenant } from './tenant.js';
import { STATS_INTERVAL_MS, STATS_MESSAGE, statsForTenant } from './stats.js';

declare module '../ports/parts.js' {
  interface Ports {
    /** the live feed: hub, tokens, stats publisher */
    ws?: WsRuntime;
  }
}

/** The live feed of a daemon, reachable for tests (`core.ports.ws`). */
export interface WsRuntime {
  hub: WsHub;
  tokens: WsTokens;
  /** sends `stats_update` to every client now */
  publishStats: () => void;
}

const runtimes = new WeakMap<Core, WsRuntime>();

/** Sends each tenant's statistics to its clients, computing them once per tenant. */
function publishStats(core: Core, hub: WsHub): void {
  const byTenant = new Map<string | null, WsClient[]>();
  for (const c of hub.all()) {
    const list = byTenant.get(c.tenantId);
    if (list) list.push(c);
    else byTenant.set(c.tenantId, [c]);
  }
  for (const [tenantId, clients] of byTenant) {
    const text = JSON.stringify({ type: STATS_MESSAGE, payload: statsForTenant(core, tenantId) });
    for (const c of clients) hub.sendText(c, text);
  }
}

/**
 * The WebSocket part (gslb-api.md §6): relays every bus `ws_message` (health_update, pool_update,
 * member_update, service_update) to the clients allowed to see the resource, sends `stats_update`
 * every STATS_INTERVAL_MS, and reports the open sockets (per tenant) through `core.gauges.webSocketClients`.
 */
PARTS.push({
  name: 'ws',
  setup: (core, ext) => {
    const log = core.log.child({ component: 'ws' });
    const hub = new WsHub(undefined, () => log.warn('websocket client too slow; dropped'));
    const tokens = new WsTokens();
    const rt: WsRuntime = { hub, tokens, publishStats: () => publishStats(core, hub) };
    runtimes.set(core, rt);
    core.ports.ws = rt;
    // a tenant counts only its own dashboards: another tenant's activity is not its business
    core.gauges.webSocketClients = (tenantId) => {
      if (tenantId === undefined || tenantId === null) return hub.size;
      let n = 0;
      for (const c of hub.all()) if (c.tenantId === tenantId) n++;
      return n;
    };
    ext.apiPlugins.push(wsRoutes(core, hub, tokens));
  },
  start: (core) => {
    const rt = runtimes.get(core)!;
    // Rows a plan deleted are only in the snapshot before it; keep it for tenant lookups.
    let previous: Snapshot = core.holder.current;
    const offPlan = core.bus.on('plan_applied', (e) => { previous = e.previous; });
    const offMsg = core.bus.on('ws_message', (msg) => {
      // nobody to tell: a large plan's messages cost nothing to look up
      if (rt.hub.size === 0) return;
      const tenant = messageTenant(msg, [core.holder.current, previous]);
      rt.hub.broadcast(msg, (c) => c.tenantId === null || (tenant !== undefined && (tenant === null || tenant === c.tenantId)));
    });
    const timer = setInterval(rt.publishStats, STATS_INTERVAL_MS).unref();
    return () => {
      clearInterval(timer);
      offPlan();
      offMsg();
      rt.hub.closeAll();
    };
  },
});
