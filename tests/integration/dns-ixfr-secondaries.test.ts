import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { dig, makeService } from '../helpers/dns-tools.js';
import { waitUntil } from '../helpers/wait.js';
import { freePort } from '../helpers/proc.js';
import { knotHead, namedHead } from '../helpers/secondaries.js';

// Incremental transfers to real secondaries (docs/dns.md "Incremental transfers"): BIND `named`
// and Knot `knotd`, each with a TSIG key of the operator and a one-day refresh, load the zone,
// then get a REST change by NOTIFY and transfer it as an IXFR difference, not the whole zone.

const SECRET = Buffer.from('gslbd-ixfr-secondaries-secret-!!').toString('base64');
const KEY = 'xfr.example.test';

let d: TestDaemon;
let dir: string;
const peers: { name: string; port: number; proc?: ChildProcess; log: string }[] = [];

function startPeer(name: string, cmd: string, args: string[], port: number) {
  const p: (typeof peers)[number] = { name, port, log: '' };
  p.proc = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  p.proc.stdout!.on('data', (b: Buffer) => { p.log += b.toString(); });
  p.proc.stderr!.on('data', (b: Buffer) => { p.log += b.toString(); });
  peers.push(p);
  return p;
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gslbd-ixfr2-'));
  const namedPort = await freePort();
  const knotPort = await freePort();
  d = await startTestDaemon({
    dns: {
      listenAddr: '127.0.0.1', port: 0, domain: 'example.test', nsNames: ['ns1.example.test.'],
      // a long refresh: only a NOTIFY explains a quick transfer
      soa: { refresh: 86400, retry: 86400, expire: 604800, minimum: 60 },
      axfr: {
        enabled: true, requireTsig: true, notifyTimeout: '200ms',
        tsigKeys: [{ name: KEY, algorithm: 'hmac-sha256', secret: SECRET, tenant: 'system' }],
        notify: [{ address: `127.0.0.1:${namedPort}`, key: KEY }, { address: `127.0.0.1:${knotPort}`, key: KEY }],
      },
    } as never,
  });
  const port = d.ports.dnsPort as number;
  await makeService(d, { name: 'ns1', domain: 'ns1.example.test.', ttl: 3600 }, [{ ipAddress: '192.0.2.53' }]);
  await makeService(d, { name: 'www', domain: 'www.example.test.', ttl: 60 }, [{ ipAddress: '192.0.2.80' }]);

  writeFileSync(join(dir, 'named.conf'), `${namedHead({ dir, port: namedPort, primaryPort: port, key: KEY, secret: SECRET })}zone "example.test" { type secondary; primaries port ${port} { 127.0.0.1 key "${KEY}"; }; file "${dir}/named-z.db"; };
`);
  // -d 3: BIND logs which transfer it asked for and whether the answer was incremental
  startPeer('named', 'named', ['-g', '-d', '3', '-c', join(dir, 'named.conf'), '-u', 'root'], namedPort);

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
  startPeer('knotd', 'knotd', ['-c', join(dir, 'knot.conf')], knotPort);
  for (const p of peers) {
    await waitUntil(`${p.name} serves the zone`, async () => (await dig(p.port, ['www.example.test', 'A'])).answers.some((a) => a.endsWith('192.0.2.80')),
      { timeoutMs: 60_000, describe: () => p.log.slice(-3000) });
  }
});
after(async () => {
  for (const p of peers) p.proc?.kill('SIGTERM');
  await d?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const serial = () => (d.ports.dnsSerial as () => number)();

test('after a REST write and its NOTIFY, BIND and Knot secondaries transfer the difference by IXFR and answer the new record', async () => {
  const logAt = d.logs.text().length;
  await makeService(d, { name: 'new', domain: 'new.example.test.', ttl: 60 }, [{ ipAddress: '192.0.2.99' }]);
  const want = serial();
  for (const p of peers) {
    await waitUntil(`${p.name} at serial ${want} with new.example.test`, async () => {
      const soa = await dig(p.port, ['example.test', 'SOA']);
      const rec = await dig(p.port, ['new.example.test', 'A']);
      return soa.answers.some((a) => a.split(/\s+/).includes(String(want))) && rec.answers.some((a) => a.endsWith('192.0.2.99'));
    }, { timeoutMs: 60_000, describe: () => p.log.slice(-3000) });
  }
  const named = peers.find((p) => p.name === 'named')!;
  const knot = peers.find((p) => p.name === 'knotd')!;
  // BIND: "Transfer completed … (serial N)" after an incremental ("IXFR") answer, never "got nonincremental response"
  assert.match(named.log, /transfer of 'example\.test\/IN' from 127\.0\.0\.1#\d+: Transfer status: success/);
  assert.match(named.log, /Transfer completed/);
  const xfr = named.log.split('\n').filter((l) => l.includes("'example.test/IN'")).join('\n');
  assert.match(xfr, /requesting IXFR/, xfr);
  assert.match(xfr, /got incremental response/, xfr);
  // Knot: "IXFR, incoming … finished"
  assert.match(knot.log, /IXFR, incoming[^\n]*finished/i, knot.log.slice(-3000));
  // gslbd answered both with the difference, signed
  const ours = d.logs.text().slice(logAt);
  const incremental = ours.split('\n').filter((l) => /"msg":"dns zone transfer"/.test(l) && /"type":"IXFR"/.test(l) && /"answer":"incremental"/.test(l));
  assert.ok(incremental.length >= 2, `two incremental transfers:\n${ours.split('\n').filter((l) => l.includes('zone transfer')).join('\n')}`);
  assert.ok(incremental.every((l) => l.includes('"tsigKey":"xfr.example.test."')));
});
