import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { dig, makeService } from '../helpers/dns-tools.js';

/**
 * Cross-check of the geo-ip and asn paths against MaxMind's published test databases, files nobody
 * on this project wrote. Skipped when the shared test-data folder is absent (a fresh clone).
 */
const dir = join(process.cwd(), '..', 'shared', 'testdata', 'geoip');
const city = join(dir, 'GeoIP2-City-Test.mmdb');
const asn = join(dir, 'GeoLite2-ASN-Test.mmdb');
const present = existsSync(city) && existsSync(asn);

let d: TestDaemon;
let port: number;

before(async () => {
  if (!present) return;
  d = await startTestDaemon({
    dns: { listenAddr: '127.0.0.1', port: 0, domain: 'maxmind.test' } as never,
    loadbalancer: {
      algorithm: 'asn', endpoints: ['192.0.2.1', '192.0.2.2', '192.0.2.3'],
      asn: { dbPath: asn, rules: [{ asn: 7018, endpoint: '192.0.2.2' }, { org: 'TELSTRA', endpoint: '192.0.2.3' }] },
      // Endpoints placed by hand near cities the City test database knows.
      geoip: { dbPath: city, endpointLocations: { '192.0.2.11': { lat: 51.5, lon: -0.1 }, '192.0.2.12': { lat: 47.6, lon: -122.3 }, '192.0.2.13': { lat: 43.9, lon: 125.3 } } },
    } as never,
  });
  port = d.ports.dnsPort as number;
  await makeService(d, { name: 'mm', domain: 'geo.maxmind.test.', algorithm: 'geo-ip' }, [{ ipAddress: '192.0.2.13' }, { ipAddress: '192.0.2.12' }, { ipAddress: '192.0.2.11' }]);
});
after(async () => { await d?.stop(); });

test('geo-ip and asn agree with MaxMind test databases', { skip: present ? false : 'shared geoip test data absent' }, async () => {
  const geoRows = [
    { subnet: '81.2.69.160/27', first: '192.0.2.11' }, // London
    { subnet: '216.160.83.56/29', first: '192.0.2.12' }, // Milton, WA
    { subnet: '175.16.199.0/24', first: '192.0.2.13' }, // Changchun
    { subnet: '2.125.160.216/29', first: '192.0.2.11' }, // Boxford, UK
  ];
  for (const r of geoRows) {
    const res = await dig(port, ['geo.maxmind.test', 'A', `+subnet=${r.subnet}`]);
    assert.equal(res.answers[0], r.first, r.subnet);
    assert.equal(res.ecs, `${r.subnet}/${r.subnet.split('/')[1]}`);
  }
  const asnRows = [
    { subnet: '12.81.92.0/24', first: '192.0.2.2' }, // AS7018 AT&T: asn rule
    { subnet: '1.128.0.0/16', first: '192.0.2.3' }, // AS1221 Telstra Pty Ltd: org rule
  ];
  for (const r of asnRows) assert.equal((await dig(port, ['maxmind.test', 'A', `+subnet=${r.subnet}`])).answers[0], r.first, r.subnet);
  assert.ok(d.logs.lines.some((l) => l.msg === 'geo database loaded' && l.type === 'GeoIP2-City'));
});
