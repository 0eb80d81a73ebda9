import { PARTS } from '../parts.js';
import { nameRules } from '../tenancy/names.js';
import { logListening } from '../log/listening.js';
import { redirectRoutes } from './routes.js';
import { lookupRedirect, redirectIndexOf } from './host-index.js';
import { createRedirectMetrics } from './metrics.js';
import { startRedirectServer } from './server.js';

declare module '../ports/parts.js' {
  interface Ports {
    /** the bound redirect listener port, when redirect.enabled */
    redirectPort?: number;
  }
}

/**
 * The redirect part (docs/redirects.md): the /api/v1/redirects routes always (rules replicate to
 * every node, whether or not it listens), and when `redirect.enabled` the HTTP listener on
 * `redirect.listenAddr:redirect.port`, which reads the current snapshot on every request, so a
 * changed rule is answered without a restart. Publishes the bound port as `core.ports.redirectPort`.
 */
PARTS.push({
  name: 'redirect',
  setup(core, ext) {
    const plugin = redirectRoutes(core);
    ext.apiPlugins.push(async (app) => { await app.register(plugin); });
  },
  async start(core) {
    const c = core.config.redirect;
    if (!c.enabled) return;
    const names = nameRules(core.config);
    const log = core.log.child({ component: 'redirect' });
    const onUnserved = (row: { id: string; tenantId: string; host: string }, reason: string) =>
      log.warn({ redirectId: row.id, tenantId: row.tenantId, host: row.host, reason }, 'redirect host not served');
    const server = await startRedirectServer({
      host: c.listenAddr,
      // checkConfigSemantics makes redirect.port required when enabled
      port: c.port!,
      lookup: (host) => lookupRedirect(redirectIndexOf(core.holder.current, names, onUnserved), host, names),
      onAnswer: createRedirectMetrics(core.metrics),
    });
    core.ports.redirectPort = server.port;
    logListening(core.log, 'redirect', c.listenAddr, server.port);
    return server.close;
  },
});
