/**
 * The gslbd side of `npm run bench:dns`: starts the real daemon (all parts) with DNS on the given
 * port, creates a weighted service of four members whose health is checked live (TCP checks every
 * 500 ms against four loopback listeners), and answers IPC requests for heap figures.
 * Usage (spawned by tests/bench/dns-gslbd.ts): node --expose-gc --import tsx tests/bench/dns-server.ts <port> <dir> [dns.workers] [dns.json]
 * where the optional JSON file holds more `dns` settings (bench:dnssec: `dnssec`).
 */
import { createServer, type Server } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { validateConfigObject } from '../../runtime/config/load.js';
import { startDaemon } from '../../runtime/daemon.js';
import '../../runtime/parts-all.js';

const [portArg, dir, workersArg, dnsFile] = process.argv.slice(2);
const MEMBERS = ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4'];
const WEIGHTS = [4, 3, 2, 1];

const listeners: Server[] = [];
let checkPort = 0;
for (const ip of MEMBERS) {
  const srv = createServer((s) => s.destroy());
  await new Promise<void>((r) => srv.listen(checkPort, ip, () => r()));
  checkPort = (srv.address() as { port: number }).port;
  listeners.push(srv);
}

const config = validateConfigObject({
  node: { id: 'bench' },
  database: { path: join(dir!, 'gslbd.db') },
  api: { enabled: false },
  dns: { listenAddr: '127.0.0.1', port: Number(portArg), domain: 'bench.test', workers: Number(workersArg ?? 0), ...(dnsFile ? JSON.parse(readFileSync(dnsFile, 'utf8')) as object : {}) },
  logging: { format: 'json', level: 'warn' },
});
const daemon = await startDaemon(config, { log: pino({ level: 'warn' }), env: {} });
const inject = async (method: 'POST' | 'PUT', url: string, payload: unknown) => {
  const r = await daemon.api.inject({ method, url, payload: payload as object });
  if (r.statusCode >= 300) throw new Error(`${method} ${url}: ${r.statusCode} ${r.body}`);
  return JSON.parse(r.body) as { id: string };
};
const pool = await inject('POST', '/api/v1/pools', { name: 'bench' });
for (const [i, ip] of MEMBERS.entries()) await inject('POST', `/api/v1/pools/${pool.id}/members`, { ipAddress: ip, port: checkPort, weight: WEIGHTS[i] });
await inject('PUT', `/api/v1/pools/${pool.id}/healthcheck`, { type: 'tcp', port: checkPort, intervalMs: 500, timeoutMs: 200 });
await inject('POST', '/api/v1/services', { name: 'www', domain: 'www.bench.test.', algorithm: 'weighted-round-robin', ttl: 60, poolId: pool.id });

process.on('message', (m: { cmd: string }) => {
  if (m.cmd === 'heap') {
    (globalThis as { gc?: () => void }).gc?.();
    const entries = [...daemon.core.health.pool(pool.id).values()];
    process.send!({ heapUsed: process.memoryUsage().heapUsed, rss: process.memoryUsage().rss, healthEntries: entries.length, lastChecked: Math.max(0, ...entries.map((e) => e.lastChecked)) });
  } else if (m.cmd === 'stop') {
    void daemon.close().then(() => { for (const l of listeners) l.close(); process.exit(0); });
  }
});
process.send!({ ready: true, port: daemon.ports.dnsPort, udpPath: daemon.ports.dnsUdpPath });
