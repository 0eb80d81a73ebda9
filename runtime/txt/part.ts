import { PARTS } from '../parts.js';
import { txtRoutes } from './routes.js';

/**
 * The TXT records part (docs/dns.md "TXT records"): /api/v1/dns/txt. The DNS part serves the rows
 * (runtime/dns/zone-index.ts) and RFC 2136 UPDATE writes them through runtime/txt/service.ts.
 */
PARTS.push({
  name: 'txt',
  setup(core, ext) {
    const plugin = txtRoutes(core);
    ext.apiPlugins.push(async (app) => { await app.register(plugin); });
  },
});
