/**
 * The gslbd side of the DNS part of `npm run bench:rum`: the real daemon (all parts) with DNS on
 * the given port, a City database, a pro licence, and one pool of four members with rumUrls served
 * by two services: `geo.bench.test` (chain geo-ip) and `rum.bench.test` (chain geo-ip then rum). The
 * RUM store is filled with 50,000 subnets, the queried one (81.2.69.0/24) among them. Over IPC it
 * times the answer path in-process (`loop`: the same Answerer the sockets use, without them).
 * Usage (spawned by tests/bench/rum.ts): node --import tsx tests/bench/rum-server.ts <port> <dir>
 */
import { join } from 'node:path';
import { pino } from 'pino';
import { validateConfigObject } from '../../runtime/config/load.js';
import { startDaemon } from '../../runtime/daemon.js';
import { issueLicense } from '../../runtime/license/license.js';
import { writeCityDb } from '../helpers/mmdb-fixtures.js';
import { buildQueryPacket } from '../../runtime/dns/query-packet.js';
import '../../runtime/parts-all.js';

const [portArg, dir] = process.argv.slice(2);
const MEMBERS = ['192.0.2.10', '192.0.2.20', '192.0.2.30', '192.0.2.40'];
const secret = 'b'.repeat(64);
const licenseKey = await issueLicense({ tier: 'pro', licensee: 'bench', expiresAt: Math.floor(Date.now() / 1000) + 86_400 }, secret);
const config = validateConfigObject({
  node: { id: 'bench' },
  database: { path: join(dir!, 'gslbd.db') },
  api: { enabled: false },
  dns: { listenAddr: '127.0.0.1', port: Number(portArg), domain: 'bench.test' },
  loadbalancer: { geoip: { dbPath: writeCityDb(dir!) } },
  license: { secret, licenseKey },
  logging: { format: 'json', level: 'warn' },
});
const daemon = await startDaemon(config, { log: pino({ level: 'warn' }), env: {} });
const inject = async (method: 'POST', url: string, payload: unknown) => {
  const r = await daemon.api.inject({ method, url, payload: payload as object });
  if (r.statusCode >= 300) throw new Error(`${method} ${url}: ${r.statusCode} ${r.body}`);
  return JSON.parse(r.body) as { id: string };
};
const pool = await inject('POST', '/api/v1/pools', { name: 'bench' });
for (const ip of MEMBERS) await inject('POST', `/api/v1/pools/${pool.id}/members`, { ipAddress: ip, port: 80, rumUrl: `http://${ip}/rum` });
await inject('POST', '/api/v1/services', { name: 'geo', domain: 'geo.bench.test.', ttl: 60, poolId: pool.id, chain: ['geo-ip'] });
await inject('POST', '/api/v1/services', { name: 'rum', domain: 'rum.bench.test.', ttl: 60, poolId: pool.id, chain: ['geo-ip', 'rum'] });
const store = daemon.core.ports.rum!.store;
for (let i = 0; i < 50_000; i++) {
  const key = i === 0 ? '81.2.69' : `10.${(i >> 8) & 255}.${i & 255}`;
  for (const [j, ip] of MEMBERS.entries()) store.add(key, ip, 20 + ((i + j * 7) % 50));
}
const answerer = daemon.core.ports.dnsAnswerer!;

/** ns per answer over `n` queries for `name` with ECS 81.2.69.0/24, from 127.0.0.1. */
function loop(name: string, n: number): number {
  const packet = buildQueryPacket(name, 1, '81.2.69.0/24');
  for (let i = 0; i < 10_000; i++) answerer.handle(packet, '127.0.0.1', true, false);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) answerer.handle(packet, '127.0.0.1', true, false);
  return Number(process.hrtime.bigint() - t0) / n;
}

process.on('message', (m: { cmd: string; name?: string; n?: number }) => {
  if (m.cmd === 'loop') process.send!({ ns: loop(m.name!, m.n!) });
  else if (m.cmd === 'stop') void daemon.close().then(() => process.exit(0));
});
process.send!({ ready: true, port: daemon.ports.dnsPort, subnets: store.counts().subnets });
