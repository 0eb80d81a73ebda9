/**
 * The gslbd side of `npm run bench:axfr`: starts the real daemon (all parts) with DNS on the given
 * port, zone transfers on (one hmac-sha256 key), and `names` services in the zone `bench.test`,
 * written as one plan through the core's apply path. Tells its parent when it is ready, and on
 * request how long its event loop was held up (monitorEventLoopDelay, 1 ms resolution).
 * Usage (spawned by tests/bench/axfr.ts): node --import tsx tests/bench/axfr-server.ts <port> <dir> <names> <secret>
 */
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { validateConfigObject } from '../../runtime/config/load.js';
import { startDaemon } from '../../runtime/daemon.js';
import { planCreateAll } from '../../core/plan/delta.js';
import type { Row } from '../../core/model/types.js';
import '../../runtime/parts-all.js';

const [portArg, dir, namesArg, secret] = process.argv.slice(2);
const names = Number(namesArg);
const config = validateConfigObject({
  node: { id: 'bench' },
  database: { path: join(dir!, 'gslbd.db') },
  api: { enabled: false },
  dns: {
    // the schema wants 1..65535; port 0 (any free port, for UDP and TCP alike) is put back below
    listenAddr: '127.0.0.1', port: Number(portArg) || 1, domain: 'bench.test', nsNames: ['ns1.bench.test'],
    axfr: { enabled: true, tsigKeys: [{ name: 'bench-key', algorithm: 'hmac-sha256', secret }] },
  },
  logging: { format: 'json', level: 'warn' },
});
config.dns.port = Number(portArg);
const daemon = await startDaemon(config, { log: pino({ level: 'warn' }), env: {} });
const meta = { origin: 'api' as const, revision: 'api:bench', tenantId: 'default' };
const rows: Row[] = [
  { kind: 'pool', id: 'p', name: 'p', ...meta },
  { kind: 'member', id: 'm4', poolId: 'p', ipAddress: '192.0.2.10', port: 80, weight: 1, priority: 0, enabled: true, rumUrl: null, ...meta },
  { kind: 'member', id: 'm6', poolId: 'p', ipAddress: '2001:db8::10', port: 80, weight: 1, priority: 0, enabled: true, rumUrl: null, ...meta },
];
for (let i = 0; i < names; i++) {
  rows.push({ kind: 'service', id: `s${i}`, name: `s${i}`, domain: `h${i}.bench.test.`, algorithm: 'round-robin', ttl: 60, poolId: 'p', chain: [], whenAllUnhealthy: 'all', asnRules: [], ...meta } as Row);
}
const t0 = performance.now();
daemon.core.apply(planCreateAll(daemon.core.holder.current, rows, 'api:bench'));
const applyMs = performance.now() - t0;

// how long the event loop (which answers UDP) was held up, between 'lagReset' and 'lag'
const lag = monitorEventLoopDelay({ resolution: 1 });
lag.enable();
process.on('message', (m: { cmd: string }) => {
  if (m.cmd === 'lagReset') { lag.reset(); process.send!({ ok: true }); }
  else if (m.cmd === 'lag') process.send!({ maxMs: lag.max / 1e6, p99Ms: lag.percentile(99) / 1e6 });
  else if (m.cmd === 'stop') void daemon.close().then(() => process.exit(0));
});
process.send!({ ready: true, port: daemon.ports.dnsPort, udpPath: daemon.ports.dnsUdpPath, applyMs, serial: (daemon.ports.dnsSerial as () => number)() });
