import { PARTS } from '../parts.js';
import { addDnsStep, createUpdateHandler } from '../dns/port.js';
import { applyDnsUpdate } from './dns-update.js';
import { DnsUpdateStep } from './dns-step.js';
import { txtRoutes } from './routes.js';

/**
 * The TXT records part (docs/dns.md "TXT records"): /api/v1/dns/txt. The DNS part serves the rows
 * (runtime/dns/zone-index.ts); with `dns.update.enabled`, this part adds the RFC 2136 UPDATE step to
 * the DNS answer chain, which writes them through runtime/txt/service.ts.
 */
PARTS.push({
  name: 'txt',
  setup(core, ext) {
    const plugin = txtRoutes(core);
    ext.apiPlugins.push(async (app) => { await app.register(plugin); });
    if (core.config.dns.update.enabled) {
      const log = core.log.child({ component: 'dns' });
      addDnsStep(core, (env) => new DnsUpdateStep(createUpdateHandler(core, (z) => env.servesZone(z), log, (grant, isZone, msg) => applyDnsUpdate(core, grant, isZone, msg))));
    }
  },
});
