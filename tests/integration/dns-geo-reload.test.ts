import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import dnsPacket from 'dns-packet';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { dig, makeService, untilAnswers } from '../helpers/dns-tools.js';
import { writeCityDb, writeMovedCityDb } from '../helpers/mmdb-fixtures.js';
import { buildQueryPacket } from '../../runtime/dns/query-packet.js';
import { waitUntil } from '../helpers/wait.js';

let d: TestDaemon;
let port: number;
let dir: string;
let dbPath: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gslbd-dns-geo-'));
  dbPath = join(dir, 'GeoCity.mmdb'); // absent at start
  d = await startTestDaemon({
    dns: { listenAddr: '127.0.0.1', port: 0, domain: 'geo.test' } as never,
    loadbalancer: { geoip: { dbPath } } as never,
  });
  port = d.ports.dnsPort as number;
  await makeService(d, { name: 'g', domain: 'g.geo.test.', algorithm: 'geo-ip' }, [{ ipAddress: '192.0.2.30' }, { ipAddress: '192.0.2.10' }]);
});
after(async () => { await d?.stop(); rmSync(dir, { recursive: true, force: true }); });

/** Sends `n` queries (ECS 81.2.69.0/24), `inflight` at a time; returns each reply's rcode and first answer. */
async function load(n: number, inflight: number, during?: (sent: number) => void): Promise<{ rcode: number; first: string }[]> {
  const s = createSocket('udp4');
  const out: { rcode: number; first: string }[] = [];
  const pkt = buildQueryPacket('g.geo.test.', 1, '81.2.69.0/24');
  let sent = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`lost replies: ${out.length}/${n}`)), 15_000);
      const send = () => { sent++; during?.(sent); s.send(pkt, port, '127.0.0.1'); };
      s.on('message', (m) => {
        const r = dnsPacket.decode(m);
        out.push({ rcode: (r.flags ?? 0) & 0xf, first: String((r.answers?.[0] as { data?: string } | undefined)?.data ?? '') });
        if (out.length === n) { clearTimeout(timer); resolve(); } else if (sent < n) setImmediate(send);
      });
      for (let i = 0; i < inflight; i++) send();
    });
  } finally { s.close(); }
  return out;
}

test('database not loaded yet: SERVFAIL after the 200 ms lookup deadline; answers once it appears', async () => {
  const t0 = Date.now();
  const [r] = await load(1, 1);
  const took = Date.now() - t0;
  assert.equal(r!.rcode, 2, 'SERVFAIL');
  assert.ok(took >= 190, `answered after the lookup deadline, not before (${took} ms)`);
  assert.equal((await dig(port, ['g.geo.test', 'A', '+subnet=81.2.69.0/24'])).status, 'SERVFAIL');
  // Atomic rename into place, as a database updater does.
  writeCityDb(dir, 'tmp.mmdb');
  renameSync(join(dir, 'tmp.mmdb'), dbPath);
  let status = '';
  const res = await waitUntil('answers once the database appears', async () => {
    const r2 = await dig(port, ['g.geo.test', 'A', '+subnet=81.2.69.0/24']);
    status = r2.status;
    return r2.status === 'NOERROR' && r2;
  }, { everyMs: 100, describe: () => `status ${status}` });
  assert.deepEqual(res.answers, ['192.0.2.10', '192.0.2.30'], 'London client: London endpoint first');
});

test('replacing the file by atomic rename under load: no lost query, new data takes effect', async () => {
  let swapped = false;
  const results = await load(3000, 8, (sent) => {
    if (sent === 300 && !swapped) {
      swapped = true;
      const tmp = join(dir, 'next.mmdb');
      writeMovedCityDb(tmp);
      renameSync(tmp, dbPath);
    }
  });
  assert.equal(results.length, 3000, 'every query answered');
  assert.ok(results.every((r) => r.rcode === 0), 'no SERVFAIL during the swap');
  const after = await untilAnswers(port, ['g.geo.test', 'A', '+subnet=81.2.69.0/24'], ['192.0.2.30', '192.0.2.10'], 'the moved database in use');
  assert.deepEqual(after.answers, ['192.0.2.30', '192.0.2.10'], 'client now located in Tokyo');
  assert.ok(d.logs.lines.some((l) => l.msg === 'geo database loaded' && (l.generation as number) >= 2));
});

test('a bad replacement is logged and the previous database stays active', async () => {
  writeFileSync(dbPath, 'this is not a MaxMind database');
  await waitUntil('the failed reload logged', () => d.logs.lines.some((l) => l.msg === 'geo database reload failed; keeping the previous one'), { everyMs: 100 });
  const res = await dig(port, ['g.geo.test', 'A', '+subnet=81.2.69.0/24']);
  assert.equal(res.status, 'NOERROR');
  assert.deepEqual(res.answers, ['192.0.2.30', '192.0.2.10'], 'still the previous (moved) database');
});
