import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import dnsPacket from 'dns-packet';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { digText, makeService, transferRaw } from '../helpers/dns-tools.js';
import { planCreateAll } from '../../core/plan/delta.js';
import type { GenericRow, Row } from '../../core/model/types.js';
import { lastRecordStart, parseTsig, signRequest, tsigKeyring, verifyResponseStream } from '../../runtime/dns/tsig.js';

const run = promisify(execFile);

const SECRET256 = Buffer.from('gslbd-axfr-test-secret-256-bits!').toString('base64');
const SECRET512 = Buffer.from('gslbd-axfr-test-secret-for-hmac-sha512-must-be-long-sixty-four!!').toString('base64');
const WRONG = Buffer.from('not-the-configured-secret-at-all').toString('base64');
const K256 = `hmac-sha256:xfr.example.test:${SECRET256}`;
const K512 = `hmac-sha512:xfr512.example.test:${SECRET512}`;
// the operator's keys (`tenant: system`): a full secondary gets the whole zone (docs/dns.md "Who gets which records")
const KEYS = [{ name: 'xfr.example.test', algorithm: 'hmac-sha256', secret: SECRET256, tenant: 'system' }, { name: 'xfr512.example.test', algorithm: 'hmac-sha512', secret: SECRET512, tenant: 'system' }];
const dnsCfg = (axfr: Record<string, unknown>) => ({
  listenAddr: '127.0.0.1', port: 0, domain: 'example.test', nsNames: ['ns1.example.test.', 'ns2.example.test.'], axfr,
}) as never;

let d: TestDaemon;
let port: number;
let dir: string;
/** names of the generated services: enough of them that a transfer takes several messages */
const MANY = 4000;

const meta = { origin: 'api' as const, revision: 'api:seed', tenantId: 'default' };
const txt = (id: string, name: string, values: string[]): GenericRow => ({ kind: 'txtrecord', id, name, values, ttl: 300, ...meta });

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gslbd-axfr-'));
  d = await startTestDaemon({ dns: dnsCfg({ enabled: true, requireTsig: false, tsigKeys: KEYS }) });
  port = d.ports.dnsPort as number;
  await makeService(d, { name: 'web', domain: 'www.example.test.', ttl: 120 }, [{ ipAddress: '192.0.2.1' }, { ipAddress: '2001:db8::1' }]);
  await makeService(d, { name: 'off', domain: 'off.example.test.' }, [{ ipAddress: '192.0.2.9', enabled: false }]);
  // name servers inside the zone need address records for the zone to load (named-checkzone, a
  // primary's integrity check): the operator serves them as services (docs/dns.md "Zone transfers")
  await makeService(d, { name: 'ns1', domain: 'ns1.example.test.', ttl: 3600 }, [{ ipAddress: '192.0.2.53' }]);
  await makeService(d, { name: 'ns2', domain: 'ns2.example.test.', ttl: 3600 }, [{ ipAddress: '192.0.2.54' }]);
  // many services and TXT rows at once, through the core's one write path
  const rows: Row[] = [{ kind: 'pool', id: 'bulk', name: 'bulk', ...meta }, { kind: 'member', id: 'bulk-m', poolId: 'bulk', ipAddress: '198.51.100.10', port: 80, weight: 1, priority: 0, enabled: true, rumUrl: null, ...meta }];
  for (let i = 0; i < MANY; i++) rows.push({ kind: 'service', id: `bulk-${i}`, name: `bulk-${i}`, domain: `h${i}.bulk.example.test.`, algorithm: 'round-robin', ttl: 30, poolId: 'bulk', chain: [], whenAllUnhealthy: 'all', asnRules: [], ...meta } as Row);
  rows.push(txt('txt-apex', 'example.test', ['v=spf1 -all']), txt('txt-long', '_long.example.test', ['y'.repeat(400)]), txt('txt-www', 'www.example.test', ['hello world', 'second value']));
  d.core.apply(planCreateAll(d.core.holder.current, rows, 'api:bulk'));
  // with 4,000 services the zone index is built in slices after the swap (docs/dns.md "Large
  // states"): wait for it, as the API does before it answers a write
  await d.core.ports.applySettled?.();
});
after(async () => {
  await d?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The zone lines of dig/kdig transfer output (comments, blank lines and TSIG pseudo-records left out). */
/** What dig and kdig print when a transfer or its signatures fail (a TSIG line says NOERROR, so not /error/). */
const FAILED = /Couldn't verify|tsig verify failure|Transfer failed|;; ERROR|TSIG error/i;
const zoneLines = (text: string) => text.split('\n').filter((l) => l.trim() !== '' && !l.startsWith(';') && !/\sTSIG\s/.test(l));

/** `named-checkzone` (BIND) over the transferred zone: it must load, with this serial. */
async function checkZone(text: string, wantSerial: number): Promise<void> {
  const file = join(dir, `zone-${Date.now()}-${Math.random()}.db`);
  writeFileSync(file, `${[...new Set(zoneLines(text))].join('\n')}\n`);
  const { stdout } = await run('named-checkzone', ['example.test', file]).catch((err: { stdout?: string }) => { throw new Error(`named-checkzone: ${err.stdout ?? String(err)}`); });
  assert.match(stdout, new RegExp(`loaded serial ${wantSerial}\\b`));
  assert.match(stdout, /^OK$/m);
}

const serial = () => (d.ports.dnsSerial as () => number)();
const records = (text: string) => Number(/XFR size: (\d+) records/.exec(text)?.[1] ?? /\((\d+) messages, (\d+) records\)/.exec(text)?.[2] ?? NaN);
const messages = (text: string) => Number(/messages (\d+)/.exec(text)?.[1] ?? /\((\d+) messages/.exec(text)?.[1] ?? NaN);
/** SOA twice, two NS, their two A records, www A+AAAA+2 TXT, apex TXT, _long TXT, one A per bulk name */
const WANT_RECORDS = 2 + 2 + 2 + 4 + 1 + 1 + MANY;

test('the TSIG matrix with dig and kdig: no key, right keys (sha256, sha512), wrong secret, unknown key', async () => {
  const rows: { name: string; bin: 'dig' | 'kdig'; args: string[]; want: 'zone' | RegExp }[] = [
    { name: 'no key (requireTsig off)', bin: 'dig', args: ['example.test', 'AXFR'], want: 'zone' },
    { name: 'right key, dig', bin: 'dig', args: ['-y', K256, 'example.test', 'AXFR'], want: 'zone' },
    { name: 'right key, kdig', bin: 'kdig', args: ['-y', K256, 'example.test', 'AXFR'], want: 'zone' },
    { name: 'sha512 key, dig', bin: 'dig', args: ['-y', K512, 'example.test', 'AXFR'], want: 'zone' },
    { name: 'sha512 key, kdig', bin: 'kdig', args: ['-y', K512, 'example.test', 'AXFR'], want: 'zone' },
    { name: 'IXFR from a serial the journal does not have (0), dig: the full zone', bin: 'dig', args: ['-y', K256, 'example.test', 'IXFR=0'], want: 'zone' },
    { name: 'IXFR from a serial the journal does not have (0), kdig: the full zone', bin: 'kdig', args: ['-y', K256, 'example.test', 'IXFR=0'], want: 'zone' },
    { name: 'wrong secret, dig', bin: 'dig', args: ['-y', `hmac-sha256:xfr.example.test:${WRONG}`, 'example.test', 'AXFR'], want: /TSIG\s+hmac-sha256\.\s+\d+\s+300\s+0\s+\d+\s+BADSIG[\s\S]*Transfer failed/ },
    { name: 'wrong secret, kdig', bin: 'kdig', args: ['-y', `hmac-sha256:xfr.example.test:${WRONG}`, 'example.test', 'AXFR'], want: /BADSIG/ },
    { name: 'unknown key name, dig', bin: 'dig', args: ['-y', `hmac-sha256:nobody.example.test:${SECRET256}`, 'example.test', 'AXFR'], want: /nobody\.example\.test\.\s+0\s+ANY\s+TSIG\s+hmac-sha256\.\s+\d+\s+300\s+0\s+\d+\s+BADKEY[\s\S]*Transfer failed/ },
    { name: 'unknown key name, kdig', bin: 'kdig', args: ['-y', `hmac-sha256:nobody.example.test:${SECRET256}`, 'example.test', 'AXFR'], want: /BADKEY/ },
    { name: 'key name right, algorithm wrong', bin: 'dig', args: ['-y', `hmac-sha512:xfr.example.test:${SECRET256}`, 'example.test', 'AXFR'], want: /BADKEY[\s\S]*Transfer failed/ },
  ];
  for (const r of rows) {
    const text = await digText(port, r.args, r.bin);
    if (r.want !== 'zone') {
      assert.match(text, r.want, `${r.name}:\n${text.slice(0, 1500)}`);
      assert.equal(zoneLines(text).filter((l) => /\sIN\s+A\s/.test(l)).length, 0, `${r.name}: no records`);
      continue;
    }
    assert.doesNotMatch(text, FAILED, `${r.name}:\n${text.slice(-600)}`);
    assert.equal(records(text), WANT_RECORDS, `${r.name}: record count\n${text.slice(-600)}`);
    assert.ok(messages(text) > 1, `${r.name}: several messages (${messages(text)})`);
    const lines = zoneLines(text);
    assert.match(lines[0]!, /^example\.test\.\s+3600\s+IN\s+SOA\s+ns1\.example\.test\. hostmaster\.example\.test\. (\d+) 3600 600 604800 60$/, r.name);
    assert.match(lines.at(-1)!, /^example\.test\.\s+3600\s+IN\s+SOA\s/, r.name);
    if (r.args.includes('-y')) assert.equal(text.match(/\sTSIG\s/g)?.length, messages(text), `${r.name}: every message signed`);
    for (const want of [/^www\.example\.test\.\s+120\s+IN\s+A\s+192\.0\.2\.1$/, /^www\.example\.test\.\s+120\s+IN\s+AAAA\s+2001:db8::1$/,
      /^www\.example\.test\.\s+300\s+IN\s+TXT\s+"hello world"$/, /^example\.test\.\s+300\s+IN\s+TXT\s+"v=spf1 -all"$/,
      /^_long\.example\.test\.\s+300\s+IN\s+TXT\s+"y{255}" "y{145}"$/, /^h3999\.bulk\.example\.test\.\s+30\s+IN\s+A\s+198\.51\.100\.10$/]) {
      assert.ok(lines.some((l) => want.test(l.replace(/\t+/g, ' ').replace(/ +/g, ' '))), `${r.name}: ${want}`);
    }
    assert.ok(!lines.some((l) => l.startsWith('off.example.test.')), `${r.name}: a service with no enabled member is not in the zone`);
  }
  await checkZone(await digText(port, ['-y', K256, 'example.test', 'AXFR']), serial());
});

/** One UDP exchange; undefined when nothing comes back within `timeoutMs`. */
async function udpExchange(msg: Buffer, timeoutMs = 1000): Promise<Buffer | undefined> {
  const s = createSocket('udp4');
  try {
    return await new Promise((resolve) => {
      const t = setTimeout(() => resolve(undefined), timeoutMs);
      s.once('message', (m) => { clearTimeout(t); resolve(m); });
      s.send(msg, port, '127.0.0.1');
    });
  } finally { s.close(); }
}

test('over UDP: AXFR and IXFR are REFUSED, signed when the request was', async () => {
  const key = tsigKeyring(KEYS as never).get('xfr.example.test.')!;
  for (const type of ['AXFR', 'IXFR'] as const) {
    const plain = await udpExchange(dnsPacket.encode({ type: 'query', id: 11, questions: [{ name: 'example.test', type }] }));
    assert.equal(plain!.readUInt16BE(2) & 0xf, 5, `${type} unsigned: REFUSED`);
    const now = Math.floor(Date.now() / 1000);
    const req = signRequest(dnsPacket.encode({ type: 'query', id: 12, questions: [{ name: 'example.test', type }] }), key, now);
    const signed = await udpExchange(req.msg);
    assert.equal(signed!.readUInt16BE(2) & 0xf, 5, `${type} signed: REFUSED`);
    assert.equal(verifyResponseStream([signed!], key, req.mac, now), undefined, `${type}: the REFUSED reply is signed`);
  }
});

test('a raw signed transfer: every message signed and chained (RFC 8945 §5.3.1), under 64 KiB', async () => {
  const key = tsigKeyring(KEYS as never).get('xfr512.example.test.')!;
  const now = Math.floor(Date.now() / 1000);
  const req = signRequest(dnsPacket.encode({ type: 'query', id: 77, questions: [{ name: 'example.test', type: 'AXFR' }] }), key, now);
  const msgs = await transferRaw(port, req.msg);
  assert.ok(msgs.length > 1);
  for (const m of msgs) assert.ok(m.length < 65536 && parseTsig(m, lastRecordStart(m)) !== undefined);
  assert.equal(verifyResponseStream(msgs, key, req.mac, now), undefined);
  assert.equal(verifyResponseStream([msgs[1]!, msgs[0]!, ...msgs.slice(2)], key, req.mac, now), 'BADSIG', 'the chain fixes the order');
});

test('unsigned transfers at one serial are byte-identical', async () => {
  const q = dnsPacket.encode({ type: 'query', id: 4242, questions: [{ name: 'example.test', type: 'AXFR' }] });
  const [a, b] = [await transferRaw(port, q), await transferRaw(port, q)];
  assert.equal(a.length, b.length);
  a.forEach((m, i) => assert.ok(m.equals(b[i]!), `message ${i}`));
});

test('metrics count transfers by result; logs name the key, never the secret', async () => {
  const text = await d.core.metrics.metrics();
  for (const result of ['ok', 'refused', 'notauth']) assert.match(text, new RegExp(`gslbd_dns_transfers_total\\{result="${result}"[^}]*\\} [1-9]`), result);
  assert.match(text, /gslbd_dns_transfers_total\{result="failed"[^}]*\} 0/);
  assert.match(text, /gslbd_dns_queries_total\{type="AXFR",rcode="NOTAUTH"[^}]*\} [1-9]/);
  const logs = d.logs.text();
  assert.match(logs, /"tsigKey":"xfr512\.example\.test\."[^\n]*"msg":"dns zone transfer"/);
  for (const s of [SECRET256, SECRET512, WRONG]) assert.ok(!logs.includes(s), 'no secret in the logs');
});

test('requireTsig: unsigned transfers are REFUSED, signed ones answered', async () => {
  const strict = await startTestDaemon({ dns: dnsCfg({ enabled: true, requireTsig: true, tsigKeys: KEYS }) });
  try {
    const p = strict.ports.dnsPort as number;
    await makeService(strict, { name: 'web', domain: 'www.example.test.' }, [{ ipAddress: '192.0.2.1' }]);
    const unsigned = await digText(p, ['example.test', 'AXFR']);
    assert.match(unsigned, /Transfer failed/);
    assert.equal(zoneLines(unsigned).length, 0, unsigned);
    const kUnsigned = await digText(p, ['example.test', 'AXFR'], 'kdig');
    assert.match(kUnsigned, /REFUSED/);
    for (const [bin, k] of [['dig', K256], ['kdig', K512]] as const) {
      const ok = await digText(p, ['-y', k, 'example.test', 'AXFR'], bin);
      assert.equal(records(ok), 2 + 2 + 1, `${bin}:\n${ok}`);
      assert.doesNotMatch(ok, FAILED);
    }
    const text = await strict.core.metrics.metrics();
    assert.match(text, /gslbd_dns_transfers_total\{result="refused"[^}]*\} 2/);
  } finally {
    await strict.stop();
  }
});
