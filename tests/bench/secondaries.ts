/**
 * `npm run bench:secondaries`: how long a REST write takes to reach real secondaries. BIND `named`
 * and Knot `knotd` are secondaries of gslbd on loopback (TSIG, a one-day SOA refresh: only NOTIFY
 * explains a quick transfer); each of BENCH_WRITES (50) writes moves one member's address, and the
 * time runs from the write's request until each secondary answers the new address (polled over
 * UDP every 2 ms). Prints p50, p99 and the largest per secondary. Bounded: 60 s per write at most.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import dnsPacket from 'dns-packet';
import { api, startTestDaemon } from '../helpers/daemon.js';
import { makeService, udpExchange } from '../helpers/dns-tools.js';
import { freePort } from '../helpers/proc.js';
import { knotHead, namedHead } from '../helpers/secondaries.js';

const WRITES = Number(process.env.BENCH_WRITES ?? 50);
const SECRET = Buffer.from('gslbd-bench-secondaries-secret!!').toString('base64');
const KEY = 'xfr.example.test';

async function answerOf(port: number, name: string): Promise<string | undefined> {
  try {
    const reply = dnsPacket.decode(await udpExchange(port, dnsPacket.encode({ type: 'query', id: 1, flags: 0, questions: [{ name, type: 'A' }] }), 500));
    const a = reply.answers?.find((r) => r.type === 'A') as { data: string } | undefined;
    return a?.data;
  } catch { return undefined; }
}

async function until(port: number, name: string, want: string, deadline: number): Promise<number> {
  for (;;) {
    if (await answerOf(port, name) === want) return performance.now();
    if (performance.now() > deadline) throw new Error(`the secondary on port ${port} never answered ${name} ${want}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!; };

const dir = mkdtempSync(join(tmpdir(), 'gslbd-bench-sec-'));
const procs: ChildProcess[] = [];
const namedPort = await freePort();
const knotPort = await freePort();
const d = await startTestDaemon({
  dns: {
    listenAddr: '127.0.0.1', port: 0, domain: 'example.test', nsNames: ['ns1.example.test.'],
    soa: { refresh: 86400, retry: 86400, expire: 604800, minimum: 60 },
    axfr: {
      enabled: true, requireTsig: true, notifyTimeout: '200ms',
      tsigKeys: [{ name: KEY, algorithm: 'hmac-sha256', secret: SECRET, tenant: 'system' }],
      notify: [{ address: `127.0.0.1:${namedPort}`, key: KEY }, { address: `127.0.0.1:${knotPort}`, key: KEY }],
    },
  } as never,
});
try {
  const port = d.ports.dnsPort as number;
  await makeService(d, { name: 'ns1', domain: 'ns1.example.test.', ttl: 3600 }, [{ ipAddress: '192.0.2.53' }]);
  const www = await makeService(d, { name: 'www', domain: 'www.example.test.', ttl: 60 }, [{ ipAddress: '10.9.0.0' }]);
  writeFileSync(join(dir, 'named.conf'), `${namedHead({ dir, port: namedPort, primaryPort: port, key: KEY, secret: SECRET })}zone "example.test" { type secondary; primaries port ${port} { 127.0.0.1 key "${KEY}"; }; file "${dir}/named-z.db"; };
`);
  procs.push(spawn('named', ['-g', '-c', join(dir, 'named.conf'), '-u', 'root'], { stdio: 'ignore' }));
  mkdirSync(join(dir, 'knot'));
  writeFileSync(join(dir, 'knot.conf'), `${knotHead({ dir, port: knotPort, primaryPort: port, key: KEY, secret: SECRET })}
zone:
  - domain: example.test
    storage: "${dir}/knot"
    file: "knot-z.db"
    master: gslbd
    acl: notify-from-gslbd
    zonefile-sync: -1
    journal-content: changes
`);
  procs.push(spawn('knotd', ['-c', join(dir, 'knot.conf')], { stdio: 'ignore' }));
  const secondaries = [{ name: 'named', port: namedPort, ms: [] as number[] }, { name: 'knotd', port: knotPort, ms: [] as number[] }];
  for (const s of secondaries) await until(s.port, 'www.example.test', '10.9.0.0', performance.now() + 60_000);
  for (let i = 1; i <= WRITES; i++) {
    const ip = `10.9.${i >> 8}.${i & 255}`;
    const t0 = performance.now();
    const r = await api(d.url, 'PUT', `/api/v1/members/${www.memberIds[0]}`, { ipAddress: ip });
    if (r.status !== 200) throw new Error(`write ${i}: ${r.status} ${JSON.stringify(r.body)}`);
    await Promise.all(secondaries.map(async (s) => { s.ms.push(await until(s.port, 'www.example.test', ip, t0 + 60_000) - t0); }));
  }
  console.log(`bench:secondaries — ${WRITES} REST writes, each until the secondary answers it; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')} on 2 CPUs`);
  for (const s of secondaries) console.log(`  ${s.name.padEnd(6)} p50 ${pct(s.ms, 50).toFixed(0)} ms  p99 ${pct(s.ms, 99).toFixed(0)} ms  max ${Math.max(...s.ms).toFixed(0)} ms`);
} finally {
  for (const p of procs) p.kill('SIGTERM');
  await d.stop();
  rmSync(dir, { recursive: true, force: true });
}
