import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { dig, digText, makeService } from '../helpers/dns-tools.js';
import { freePort } from '../helpers/proc.js';
import { waitUntil } from '../helpers/wait.js';
import { planCreateAll } from '../../core/plan/delta.js';
import type { Row } from '../../core/model/types.js';

// Zone transfers over TLS (XoT, RFC 9103; docs/dns.md "Zone transfers over TLS"): kdig +tls with a
// self-signed certificate made by openssl, `dns.axfr.tlsOnly` refusing plain TCP, TSIG and tenant
// scoping over TLS, the TCP limits on the TLS listener, and BIND `named` as a secondary that
// transfers over TLS.

const run = promisify(execFile);
const SECRET = Buffer.from('gslbd-xot-test-secret-256-bits!!').toString('base64');
const KEY = 'xfr.example.test';
const TENANT_SECRET = Buffer.from('gslbd-xot-tenant-secret-256bits!').toString('base64');
const HOST = 'xfr.gslbd.test';

let d: TestDaemon;
let dir: string;
let port = 0;
let tlsPort = 0;
let named: ChildProcess | undefined;
let namedPort = 0;
let namedLog = '';

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gslbd-xot-'));
  await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-subj', `/CN=${HOST}`, '-addext', `subjectAltName=DNS:${HOST},IP:127.0.0.1`]);
  tlsPort = await freePort();
  d = await startTestDaemon({
    dns: {
      listenAddr: '127.0.0.1', port: 0, domain: 'example.test', nsNames: ['ns1.example.test.'],
      axfr: {
        enabled: true, requireTsig: true, tlsOnly: true,
        tsigKeys: [{ name: KEY, secret: SECRET, tenant: 'system' }, { name: 'kt.example.test', secret: TENANT_SECRET, tenant: 'default' }],
      },
      tls: { certFile: join(dir, 'cert.pem'), keyFile: join(dir, 'key.pem'), port: tlsPort },
      tcp: { maxConnectionsPerSource: 6, idleTimeout: '1s' },
    } as never,
  });
  port = d.ports.dnsPort as number;
  assert.equal(d.ports.dnsTlsPort, tlsPort);
  assert.ok(d.logs.lines.some((l) => l.msg === 'listening' && l.listener === 'dns tls' && l.address === `127.0.0.1:${tlsPort}`), 'a listening line for dns tls');
  await makeService(d, { name: 'ns1', domain: 'ns1.example.test.', ttl: 3600 }, [{ ipAddress: '192.0.2.53' }]);
  await makeService(d, { name: 'www', domain: 'www.example.test.', ttl: 60 }, [{ ipAddress: '192.0.2.80' }]);
});
after(async () => {
  named?.kill('SIGTERM');
  await d?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const tls = (extra: string[] = []) => ['+tls', `+tls-ca=${join(dir, 'cert.pem')}`, `+tls-hostname=${HOST}`, ...extra];
const axfrRecords = (text: string) => text.split('\n').filter((l) => /^\S+\s+\d+\s+IN\s+(SOA|NS|A|AAAA|TXT)\s/.test(l));

test('kdig +tls (certificate verified) transfers the zone with the operator key, every message signed', async () => {
  const out = await digText(tlsPort, [...tls(), '-y', `hmac-sha256:${KEY}:${SECRET}`, 'example.test', 'AXFR'], 'kdig');
  const recs = axfrRecords(out);
  assert.equal(recs.filter((l) => /\sSOA\s/.test(l)).length, 2, out);
  assert.ok(recs.some((l) => /^www\.example\.test\.\s.*\sA\s+192\.0\.2\.80$/.test(l)), out);
  assert.doesNotMatch(out, /failed|REFUSED|NOTAUTH/, out);
  assert.equal(out.match(/\sTSIG\s/g)?.length, Number(/\((\d+) messages/.exec(out)?.[1]), out);
});

test('IXFR over TLS is answered as over TCP: from a serial the journal does not have (0), the whole zone', async () => {
  const out = await digText(tlsPort, [...tls(), '-y', `hmac-sha256:${KEY}:${SECRET}`, 'example.test', 'IXFR=0'], 'kdig');
  assert.equal(axfrRecords(out).filter((l) => /\sSOA\s/.test(l)).length, 2, out);
});

test('dns.axfr.tlsOnly: the same transfer over plain TCP is REFUSED (signed), and queries over TCP still answer', async () => {
  const out = await digText(port, ['-y', `hmac-sha256:${KEY}:${SECRET}`, 'example.test', 'AXFR'], 'kdig');
  assert.match(out, /REFUSED/, out);
  assert.equal(axfrRecords(out).length, 0, out);
  const a = await digText(port, ['+tcp', 'www.example.test', 'A'], 'kdig');
  assert.match(a, /192\.0\.2\.80/, a);
});

test('over TLS the TSIG rules hold: no key REFUSED (requireTsig), a wrong secret NOTAUTH, a tenant key its own names', async () => {
  const unsigned = await digText(tlsPort, [...tls(), 'example.test', 'AXFR'], 'kdig');
  assert.match(unsigned, /REFUSED/, unsigned);
  const wrong = await digText(tlsPort, [...tls(), '-y', `hmac-sha256:${KEY}:${TENANT_SECRET}`, 'example.test', 'AXFR'], 'kdig');
  assert.match(wrong, /NOTAUTH|BADSIG/, wrong);
  const tenant = await digText(tlsPort, [...tls(), '-y', `hmac-sha256:kt.example.test:${TENANT_SECRET}`, 'example.test', 'AXFR'], 'kdig');
  assert.equal(axfrRecords(tenant).filter((l) => /\sSOA\s/.test(l)).length, 2, tenant);
  assert.ok(axfrRecords(tenant).some((l) => /^www\.example\.test\./.test(l)), tenant);
});

test('other queries over TLS are answered as over TCP (DNS over TLS)', async () => {
  const out = await digText(tlsPort, [...tls(), 'www.example.test', 'A'], 'kdig');
  assert.match(out, /NOERROR/, out);
  assert.match(out, /www\.example\.test\.\s+60\s+IN\s+A\s+192\.0\.2\.80/, out);
});

test('the listener negotiates ALPN "dot" (refuses a client offering only another protocol) and TLS 1.3 only', async () => {
  const alpn = await new Promise<{ proto: string | false | null; version: string | null }>((resolve, reject) => {
    const s = tlsConnect({ host: '127.0.0.1', port: tlsPort, servername: HOST, rejectUnauthorized: false, ALPNProtocols: ['dot'] }, () => {
      resolve({ proto: s.alpnProtocol, version: s.getProtocol() });
      s.destroy();
    });
    s.once('error', reject);
  });
  assert.deepEqual(alpn, { proto: 'dot', version: 'TLSv1.3' });
  const old = await new Promise<string>((resolve) => {
    const s = tlsConnect({ host: '127.0.0.1', port: tlsPort, rejectUnauthorized: false, maxVersion: 'TLSv1.2' }, () => { resolve('connected'); s.destroy(); });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
  assert.notEqual(old, 'connected');
  const h2 = await new Promise<string>((resolve) => {
    const s = tlsConnect({ host: '127.0.0.1', port: tlsPort, rejectUnauthorized: false, ALPNProtocols: ['h2'] }, () => { resolve('connected'); s.destroy(); });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
  assert.equal(h2, 'ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL');
});

test('the TCP limits bound the TLS listener: the per-source cap refuses at once, a connection that never handshakes is closed', async () => {
  const socks = [] as ReturnType<typeof tcpConnect>[];
  const closed: boolean[] = [];
  for (let i = 0; i < 7; i++) {
    const s = tcpConnect(tlsPort, '127.0.0.1');
    const at = i;
    closed[at] = false;
    s.on('error', () => {});
    s.on('close', () => { closed[at] = true; });
    socks.push(s);
    await new Promise<void>((r) => s.once('connect', () => r()));
  }
  // the seventh is over dns.tcp.maxConnectionsPerSource (6): closed at once
  await waitUntil('the connection over the per-source cap closed', () => closed[6]);
  // the others send nothing, not even a ClientHello: closed by the idle timeout (1s)
  await waitUntil('idle TLS connections closed', () => closed.slice(0, 6).every(Boolean));
  const m = await d.core.metrics.metrics();
  assert.match(m, /gslbd_dns_tls_refused_total\{reason="per_source"[^}]*\} [1-9]/);
  assert.match(m, /gslbd_dns_tls_timeouts_total\{kind="idle"[^}]*\} [1-9]/);
  for (const s of socks) s.destroy();
});

test('a zone of several messages streams over TLS, each message signed', async () => {
  const meta = { origin: 'api' as const, revision: 'api:bulk', tenantId: 'default' };
  const rows: Row[] = [{ kind: 'pool', id: 'bulk', name: 'bulk', ...meta }, { kind: 'member', id: 'bulk-m', poolId: 'bulk', ipAddress: '198.51.100.10', port: 80, weight: 1, priority: 0, enabled: true, rumUrl: null, ...meta }];
  for (let i = 0; i < 4000; i++) rows.push({ kind: 'service', id: `bulk-${i}`, name: `bulk-${i}`, domain: `h${i}.bulk.example.test.`, algorithm: 'round-robin', ttl: 30, poolId: 'bulk', chain: [], whenAllUnhealthy: 'all', asnRules: [], ...meta } as Row);
  d.core.apply(planCreateAll(d.core.holder.current, rows, 'api:bulk'));
  await d.core.ports.applySettled?.();
  const out = await digText(tlsPort, [...tls(), '-y', `hmac-sha256:${KEY}:${SECRET}`, 'example.test', 'AXFR'], 'kdig');
  const m = /\((\d+) messages, (\d+) records\)/.exec(out);
  assert.ok(m, out.slice(-2000));
  // SOA, NS, ns1, www, 4,000 services, SOA
  assert.equal(Number(m[2]), 4005, out.slice(-2000));
  assert.ok(Number(m[1]) > 1, out.slice(-2000));
  assert.equal(out.match(/\sTSIG\s/g)?.length, Number(m[1]), 'every message signed');
});

test('BIND named as a secondary transfers the zone over TLS (primaries … tls), with the operator key', async () => {
  namedPort = await freePort();
  writeFileSync(join(dir, 'named.conf'), `
options { directory "${dir}"; listen-on port ${namedPort} { 127.0.0.1; }; listen-on-v6 { none; }; pid-file none; recursion no; notify no; };
key "${KEY}" { algorithm hmac-sha256; secret "${SECRET}"; };
tls gslbd { remote-hostname "${HOST}"; ca-file "${join(dir, 'cert.pem')}"; };
zone "example.test" { type secondary; primaries { 127.0.0.1 port ${tlsPort} key "${KEY}" tls gslbd; }; file "${dir}/z.db"; };
`);
  named = spawn('named', ['-g', '-c', join(dir, 'named.conf'), '-u', 'root'], { stdio: ['ignore', 'pipe', 'pipe'] });
  named.stdout!.on('data', (b: Buffer) => { namedLog += b.toString(); });
  named.stderr!.on('data', (b: Buffer) => { namedLog += b.toString(); });
  await waitUntil('named serves www.example.test from a transfer over TLS', async () => {
    const www = await dig(namedPort, ['www.example.test', 'A']);
    return www.answers.some((a) => a.endsWith('192.0.2.80'));
  }, { timeoutMs: 60_000, describe: () => namedLog.slice(-3000) });
  // with dns.axfr.tlsOnly, a transfer that succeeded went over TLS
  assert.match(namedLog, /Transfer status: success/, namedLog.slice(-3000));
});
