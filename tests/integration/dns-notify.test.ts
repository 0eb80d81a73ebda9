import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { connect } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import dnsPacket from 'dns-packet';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { dig, makeService, udpExchange } from '../helpers/dns-tools.js';
import { waitUntil } from '../helpers/wait.js';
import { freePort } from '../helpers/proc.js';

const SECRET = Buffer.from('gslbd-notify-test-secret-256bit!').toString('base64');
const KEY = 'xfr.example.test';

let d: TestDaemon;
let dir: string;
let named: ChildProcess | undefined;
let namedPort: number;
let namedLog = '';
/** a target that reads every datagram and never answers */
let silent: Socket;
let silentSeen = 0;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gslbd-notify-'));
  namedPort = await freePort();
  silent = createSocket('udp4');
  silent.on('message', () => { silentSeen++; });
  await new Promise<void>((r) => silent.bind(0, '127.0.0.1', r));
  d = await startTestDaemon({
    dns: {
      listenAddr: '127.0.0.1', port: 0, domain: 'example.test', nsNames: ['ns1.example.test.'],
      // a long refresh: only a NOTIFY explains a quick transfer
      soa: { refresh: 86400, retry: 86400, expire: 604800, minimum: 60 },
      axfr: {
        enabled: true, requireTsig: true, notifyTimeout: '100ms',
        tsigKeys: [{ name: KEY, algorithm: 'hmac-sha256', secret: SECRET, tenant: 'system' }],
        notify: [{ address: `127.0.0.1:${namedPort}`, key: KEY }, { address: `127.0.0.1:${silent.address().port}` }],
      },
    } as never,
  });
  const port = d.ports.dnsPort as number;
  await makeService(d, { name: 'ns1', domain: 'ns1.example.test.', ttl: 3600 }, [{ ipAddress: '192.0.2.53' }]);
  writeFileSync(join(dir, 'named.conf'), `
options { directory "${dir}"; listen-on port ${namedPort} { 127.0.0.1; }; listen-on-v6 { none; }; pid-file none; recursion no; notify no; allow-notify { 127.0.0.1; }; };
key "${KEY}" { algorithm hmac-sha256; secret "${SECRET}"; };
zone "example.test" { type secondary; primaries port ${port} { 127.0.0.1 key "${KEY}"; }; file "${dir}/z.db"; };
`);
  named = spawn('named', ['-g', '-c', join(dir, 'named.conf'), '-u', 'root'], { stdio: ['ignore', 'pipe', 'pipe'] });
  named.stdout!.on('data', (b: Buffer) => { namedLog += b.toString(); });
  named.stderr!.on('data', (b: Buffer) => { namedLog += b.toString(); });
  // named loads the zone from gslbd at start (serial of the first change)
  await waitUntil('named serves the zone', async () => (await dig(namedPort, ['example.test', 'SOA'])).status === 'NOERROR', { timeoutMs: 60_000, describe: () => namedLog.slice(-3000) });
});
after(async () => {
  named?.kill('SIGTERM');
  silent?.close();
  await d?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const serial = () => (d.ports.dnsSerial as () => number)();
const metric = async (result: string) => Number(new RegExp(`gslbd_dns_notify_total\\{result="${result}"[^}]*\\} (\\d+)`).exec(await d.core.metrics.metrics())?.[1] ?? NaN);

test('a change through the REST API reaches a BIND secondary by NOTIFY, not by its refresh timer', async () => {
  const before = (await dig(namedPort, ['example.test', 'SOA'])).answers.join(' ');
  await makeService(d, { name: 'www', domain: 'www.example.test.', ttl: 60 }, [{ ipAddress: '192.0.2.80' }]);
  const want = serial();
  assert.ok(!before.includes(` ${want} `), `named already at ${want}: ${before}`);
  await waitUntil(`named at serial ${want} with www`, async () => {
    const soa = await dig(namedPort, ['example.test', 'SOA']);
    const www = await dig(namedPort, ['www.example.test', 'A']);
    return soa.answers.some((a) => a.split(/\s+/).includes(String(want))) && www.answers.some((a) => a.endsWith('192.0.2.80'));
  }, { timeoutMs: 60_000, describe: () => namedLog.slice(-3000) });
  await waitUntil('an answered NOTIFY counted', async () => (await metric('answered')) >= 1);
  assert.match(d.logs.text(), /"tsigKey":"xfr\.example\.test\."[^\n]*"msg":"dns notify answered"/);
});

test('an unanswered target is retried, then counted as failed', async () => {
  await waitUntil('the silent target given up', async () => (await metric('failed')) >= 1, { timeoutMs: 60_000 });
  assert.ok((await metric('retried')) >= 4, 'four resends before giving up');
  assert.ok(silentSeen >= 5, `the silent target read ${silentSeen} NOTIFYs`);
  assert.match(d.logs.text(), /"msg":"dns notify unanswered"/);
});

const notifyQuery = (id: number) => {
  const m = dnsPacket.encode({ type: 'query', id, questions: [{ name: 'example.test', type: 'SOA' }] });
  m.writeUInt16BE((4 << 11) | 0x0400, 2);
  return m;
};

test('a NOTIFY sent to gslbd gets NOTIMP over UDP (a DNS worker thread) and TCP', async () => {
  const port = d.ports.dnsPort as number;
  const r = await udpExchange(port, notifyQuery(0x1234));
  assert.equal(r.readUInt16BE(0), 0x1234);
  assert.equal((r.readUInt16BE(2) >> 11) & 0xf, 4, 'opcode NOTIFY echoed');
  assert.equal(r.readUInt16BE(2) & 0xf, 4, 'NOTIMP over UDP');
  const q = notifyQuery(0x4321);
  const len = Buffer.alloc(2); len.writeUInt16BE(q.length);
  const reply = await new Promise<Buffer>((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => { s.write(Buffer.concat([len, q])); });
    let buf = Buffer.alloc(0);
    s.on('data', (b) => { buf = Buffer.concat([buf, b]); if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) { s.destroy(); resolve(buf.subarray(2)); } });
    s.on('error', reject);
  });
  assert.equal(reply.readUInt16BE(0), 0x4321);
  assert.equal(reply.readUInt16BE(2) & 0xf, 4, 'NOTIMP over TCP');
});
