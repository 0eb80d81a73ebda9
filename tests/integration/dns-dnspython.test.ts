import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { dig } from '../helpers/dns-tools.js';
import { pyAxfr, pyUpdate, type PyKey } from '../helpers/dnspython.js';

// dnspython as the real client (certbot's RFC 2136 plugin and ACME DNS-01 clients use it): it
// compresses the TSIG owner name against the zone name whenever the key name ends in the zone's
// (key ka.example.test, zone example.test, the layout docs/dns.md uses). Stock
// `dns.query.tcp(UPDATE)`, `dns.query.udp(UPDATE)` and `dns.query.xfr` must verify
// (docs/dns.md "TSIG").

const SYS = randomBytes(24).toString('hex');
const sys = { authorization: `Bearer ${SYS}` };
const KA: PyKey = { key: 'ka.example.test.', algorithm: 'hmac-sha256', secret: Buffer.from('tenant-a-acme-key-of-32-bytes-ok').toString('base64') };
let d: TestDaemon;
let port = 0;

before(async () => {
  d = await startTestDaemon({
    dns: {
      listenAddr: '127.0.0.1', port: 0, domain: 'example.test',
      axfr: { enabled: true, requireTsig: true, tsigKeys: [{ name: 'ka.example.test', algorithm: 'hmac-sha256', secret: KA.secret }] },
      update: { enabled: true, grants: [{ key: 'ka.example.test', tenant: 'a', suffixes: ['a.example.test'] }] },
    },
  } as never, { GSLB_API_KEY: SYS });
  port = d.ports.dnsPort as number;
  assert.equal((await api(d.url, 'POST', '/api/v1/tenants', { id: 'a' }, sys)).status, 201);
});
after(() => d?.stop());

test('dnspython UPDATE over TCP and UDP with a compressed TSIG owner name: NOERROR, and dig sees the records', async () => {
  const name = '_acme-challenge.a.example.test';
  assert.deepEqual(await pyUpdate(port, 'example.test', KA, [['add', name, 60, 'token-tcp']]), { rcode: 'NOERROR' });
  assert.deepEqual(await pyUpdate(port, 'example.test', KA, [['add', name, 60, 'token-udp']], false), { rcode: 'NOERROR' });
  const r = await dig(port, [name, 'TXT']);
  assert.deepEqual(r.answers.sort(), ['"token-tcp"', '"token-udp"']);
  assert.deepEqual(await pyUpdate(port, 'example.test', KA, [['delete', name, 0, 'token-udp']]), { rcode: 'NOERROR' });
  assert.deepEqual((await dig(port, [name, 'TXT'])).answers, ['"token-tcp"']);
  assert.ok(!d.logs.text().includes(KA.secret), 'no secret in the log');
});

test('dnspython AXFR (dns.query.xfr into dns.zone.from_xfr) with the same key: the zone loads', async () => {
  assert.deepEqual(await pyUpdate(port, 'example.test', KA, [['add', 'www.a.example.test', 120, 'hello']]), { rcode: 'NOERROR' });
  const z = await pyAxfr(port, 'example.test', KA);
  assert.equal(z.error, undefined, z.error);
  const rows = z.records!.map(([n, ttl, type, data]) => `${n} ${ttl} ${type} ${data}`);
  assert.ok(rows.some((l) => /^example\.test\. 3600 SOA ns1\.example\.test\. hostmaster\.example\.test\. \d+ /.test(l)), rows.join('\n'));
  assert.ok(rows.includes('example.test. 3600 NS ns1.example.test.'), rows.join('\n'));
  assert.ok(rows.includes('www.a.example.test. 120 TXT "hello"'), rows.join('\n'));
  assert.ok(rows.includes('_acme-challenge.a.example.test. 60 TXT "token-tcp"'), rows.join('\n'));
});
