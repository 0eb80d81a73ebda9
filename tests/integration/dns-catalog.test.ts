import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { dig, digText, makeService } from '../helpers/dns-tools.js';
import { freePort } from '../helpers/proc.js';
import { knotHead } from '../helpers/secondaries.js';
import { waitUntil } from '../helpers/wait.js';

// The catalog zone (RFC 9432; docs/dns.md "Catalog zone"): gslbd serves `catalog.invalid.` listing
// every zone it serves, answers it over UDP (the DNS worker hands those queries to the main thread)
// and by AXFR with the TSIG rules of every zone, and NOTIFYs it. BIND `named` and Knot `knotd` as
// catalog consumers, configured as docs/dns.md "Running secondaries" shows, add a zone gslbd starts
// serving and drop one it stops serving, both written through the REST API.

const SECRET = Buffer.from('gslbd-catalog-test-secret-256bit').toString('base64');
const KEY = 'xfr.example.test';
const TENANT_SECRET = Buffer.from('gslbd-catalog-tenant-secret-256b').toString('base64');
const CATALOG = 'catalog.invalid';
const HOST = 'ns1.example.test';
const run = promisify(execFile);

let d: TestDaemon;
let dir: string;
let port = 0;
let named: ChildProcess | undefined;
let namedPort = 0;
let namedLog = '';
let knot: ChildProcess | undefined;
let knotPort = 0;
let knotLog = '';
let tlsPort = 0;

/** The member id gslbd gives a zone: SHA-1 of its lower-cased wire form, in hex. */
const memberId = (zone: string) => {
  const labels = zone.replace(/\.$/, '').split('.');
  return createHash('sha1').update(Buffer.concat([...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])), Buffer.from([0])])).digest('hex');
};

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gslbd-catalog-'));
  namedPort = await freePort();
  knotPort = await freePort();
  tlsPort = await freePort();
  await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-subj', `/CN=${HOST}`, '-addext', `subjectAltName=DNS:${HOST}`]);
  d = await startTestDaemon({
    dns: {
      listenAddr: '127.0.0.1', port: 0, domain: 'example.test', nsNames: ['ns1.example.test.'],
      // a long refresh: only a NOTIFY of the catalog explains a quick pick-up
      soa: { refresh: 86400, retry: 86400, expire: 604800, minimum: 60 },
      axfr: {
        enabled: true, requireTsig: true, notifyTimeout: '100ms',
        tsigKeys: [{ name: KEY, secret: SECRET, tenant: 'system' }, { name: 'kt.example.test', secret: TENANT_SECRET, tenant: 'default' }],
        notify: [{ address: `127.0.0.1:${namedPort}`, key: KEY }, { address: `127.0.0.1:${knotPort}`, key: KEY }],
      },
      catalog: { zone: CATALOG },
      // named transfers over TLS, knotd (3.2: no XoT client) over TCP, as docs/dns.md "Running secondaries" says
      tls: { certFile: join(dir, 'cert.pem'), keyFile: join(dir, 'key.pem'), port: tlsPort },
    } as never,
  });
  port = d.ports.dnsPort as number;
  await makeService(d, { name: 'ns1', domain: 'ns1.example.test.', ttl: 3600 }, [{ ipAddress: '192.0.2.53' }]);
  writeFileSync(join(dir, 'named.conf'), `
options {
  directory "${dir}"; listen-on port ${namedPort} { 127.0.0.1; }; listen-on-v6 { none; }; pid-file none; recursion no; notify no;
  allow-notify { 127.0.0.1; };
  catalog-zones { zone "${CATALOG}." default-primaries { 127.0.0.1 port ${tlsPort} key "${KEY}" tls gslbd-tls; } in-memory yes; };
};
key "${KEY}" { algorithm hmac-sha256; secret "${SECRET}"; };
tls gslbd-tls { remote-hostname "${HOST}"; ca-file "${join(dir, 'cert.pem')}"; };
zone "${CATALOG}." { type secondary; primaries { 127.0.0.1 port ${tlsPort} key "${KEY}" tls gslbd-tls; }; file "${dir}/catalog.db"; };
`);
  named = spawn('named', ['-g', '-c', join(dir, 'named.conf'), '-u', 'root'], { stdio: ['ignore', 'pipe', 'pipe'] });
  named.stdout!.on('data', (b: Buffer) => { namedLog += b.toString(); });
  named.stderr!.on('data', (b: Buffer) => { namedLog += b.toString(); });
  writeFileSync(join(dir, 'knot.conf'), `${knotHead({ dir, port: knotPort, primaryPort: port, key: KEY, secret: SECRET })}template:
  - id: default
    storage: ${dir}/knot
  - id: gslbd-member
    master: gslbd
    acl: notify-from-gslbd
    storage: ${dir}/knot
zone:
  - domain: ${CATALOG}.
    master: gslbd
    acl: notify-from-gslbd
    catalog-role: interpret
    catalog-template: gslbd-member
`);
  mkdirSync(join(dir, 'knot'));
  knot = spawn('knotd', ['-c', join(dir, 'knot.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  knot.stdout!.on('data', (b: Buffer) => { knotLog += b.toString(); });
  knot.stderr!.on('data', (b: Buffer) => { knotLog += b.toString(); });
  await waitUntil('named serves example.test, a member of the catalog', async () => (await dig(namedPort, ['example.test', 'SOA'])).status === 'NOERROR',
    { timeoutMs: 60_000, describe: () => namedLog.slice(-3000) });
  await waitUntil('knotd serves example.test, a member of the catalog', async () => (await dig(knotPort, ['example.test', 'SOA'])).status === 'NOERROR',
    { timeoutMs: 60_000, describe: () => knotLog.slice(-3000) });
});
after(async () => {
  named?.kill('SIGTERM');
  knot?.kill('SIGTERM');
  await d?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('gslbd answers the catalog over UDP: SOA and NS invalid. at the apex, version "2", one PTR per zone, NXDOMAIN elsewhere', async () => {
  const soa = await dig(port, [`${CATALOG}.`, 'SOA']);
  assert.equal(soa.status, 'NOERROR', soa.text);
  assert.ok(soa.flags.includes('aa'), soa.text);
  assert.match(soa.answers.join('\n'), /^invalid\. invalid\. \d+ 86400 86400 604800 60$/, soa.text);
  assert.deepEqual((await dig(port, [`${CATALOG}.`, 'NS'])).answers, ['invalid.']);
  assert.deepEqual((await dig(port, [`version.${CATALOG}.`, 'TXT'])).answers, ['"2"']);
  const ptr = await dig(port, [`${memberId('example.test.')}.zones.${CATALOG}.`, 'PTR']);
  assert.deepEqual(ptr.answers, ['example.test.'], ptr.text);
  assert.equal((await dig(port, [`nothing.${CATALOG}.`, 'A'])).status, 'NXDOMAIN');
  const ent = await dig(port, [`zones.${CATALOG}.`, 'A']);
  assert.equal(ent.status, 'NOERROR', ent.text);
  assert.equal(ent.answers.length, 0, ent.text);
});

test('the catalog transfers with the operator key; a tenant key gets its apex only; unsigned is REFUSED (requireTsig)', async () => {
  const full = await digText(port, ['-y', `hmac-sha256:${KEY}:${SECRET}`, `${CATALOG}.`, 'AXFR']);
  const recs = full.split('\n').filter((l) => /^\S+\s+\d+\s+IN\s+\S+\s/.test(l));
  assert.equal(recs.filter((l) => /\sSOA\s/.test(l)).length, 2, full);
  assert.ok(recs.some((l) => /^version\.catalog\.invalid\.\s+0\s+IN\s+TXT\s+"2"$/.test(l)), full);
  assert.ok(recs.some((l) => l.startsWith(`${memberId('example.test.')}.zones.${CATALOG}.`) && /PTR\s+example\.test\.$/.test(l)), full);
  const tenant = await digText(port, ['-y', `hmac-sha256:kt.example.test:${TENANT_SECRET}`, `${CATALOG}.`, 'AXFR']);
  const trecs = tenant.split('\n').filter((l) => /^\S+\s+\d+\s+IN\s+\S+\s/.test(l));
  assert.deepEqual(trecs.map((l) => l.split(/\s+/)[3]), ['SOA', 'NS', 'SOA'], tenant);
  assert.match(await digText(port, [`${CATALOG}.`, 'AXFR']), /REFUSED|Transfer failed/);
});

let shop: { serviceId: string } | undefined;

test('named and knotd, catalog consumers, add the zone of a service created through the REST API', async () => {
  shop = await makeService(d, { name: 'shop', domain: 'shop.example.', ttl: 60 }, [{ ipAddress: '192.0.2.81' }]);
  const ptr = await dig(port, [`${memberId('shop.example.')}.zones.${CATALOG}.`, 'PTR']);
  assert.deepEqual(ptr.answers, ['shop.example.'], ptr.text);
  await waitUntil('named serves shop.example', async () => (await dig(namedPort, ['shop.example', 'A'])).answers.some((a) => a.endsWith('192.0.2.81')),
    { timeoutMs: 60_000, describe: () => namedLog.slice(-3000) });
  // named took the member over TLS (the catalog's default-primaries), from gslbd's TLS port
  assert.match(namedLog, new RegExp(`'shop\\.example/IN' from 127\\.0\\.0\\.1#${tlsPort}: Transfer status: success`), namedLog.slice(-3000));
  await waitUntil('knotd serves shop.example', async () => (await dig(knotPort, ['shop.example', 'A'])).answers.some((a) => a.endsWith('192.0.2.81')),
    { timeoutMs: 60_000, describe: () => knotLog.slice(-3000) });
});

test('named and knotd drop the zone once its service is deleted through the REST API', async () => {
  assert.ok(shop);
  assert.equal((await api(d.url, 'DELETE', `/api/v1/services/${shop.serviceId}`)).status, 204);
  assert.equal((await dig(port, [`${memberId('shop.example.')}.zones.${CATALOG}.`, 'PTR'])).status, 'NXDOMAIN');
  await waitUntil('named no longer serves shop.example', async () => (await dig(namedPort, ['shop.example', 'SOA'])).status === 'REFUSED',
    { timeoutMs: 60_000, describe: () => namedLog.slice(-3000) });
  await waitUntil('knotd no longer serves shop.example', async () => (await dig(knotPort, ['shop.example', 'SOA'])).status === 'REFUSED',
    { timeoutMs: 60_000, describe: () => knotLog.slice(-3000) });
  // the other member stays
  assert.equal((await dig(namedPort, ['example.test', 'SOA'])).status, 'NOERROR');
  assert.equal((await dig(knotPort, ['example.test', 'SOA'])).status, 'NOERROR');
});
