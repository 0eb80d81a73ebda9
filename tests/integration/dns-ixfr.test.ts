import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestDaemon, api, type TestDaemon } from '../helpers/daemon.js';
import dnsPacket from 'dns-packet';
import { digText, makeService, udpExchange } from '../helpers/dns-tools.js';
import { planCreateAll } from '../../core/plan/delta.js';
import type { Row } from '../../core/model/types.js';

const SECRET = Buffer.from('gslbd-ixfr-test-secret-256-bits!').toString('base64');
const SECRET_A = Buffer.from('gslbd-ixfr-tenant-a-secret-bits!').toString('base64');
const KEY = `hmac-sha256:xfr.example.test:${SECRET}`;
const KEY_A = `hmac-sha256:ka.example.test:${SECRET_A}`;

let dir: string;
let path: string;
let d: TestDaemon;

const start = (file: string) => startTestDaemon({
  database: { path: file },
  dns: {
    listenAddr: '127.0.0.1', port: 0, domain: 'example.test', nsNames: ['ns1.example.test.'],
    axfr: {
      enabled: true, requireTsig: true,
      tsigKeys: [{ name: 'xfr.example.test', secret: SECRET, tenant: 'system' }, { name: 'ka.example.test', secret: SECRET_A, tenant: 'a' }],
    },
  } as never,
});

const port = () => d.ports.dnsPort as number;
const serial = () => (d.ports.dnsSerial as () => number)();
/** The record lines of kdig / dig transfer output (comments, blank lines, TSIG left out), whitespace normalised. */
const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '' && !l.startsWith(';') && !/\sTSIG\s/.test(l)).map((l) => l.replace(/\s+/g, ' ').trim());
const FAILED = /Couldn't verify|tsig verify failure|Transfer failed|;; ERROR|TSIG error|failed/i;
const soaLine = (s: number) => new RegExp(`^example\\.test\\. 3600 IN SOA ns1\\.example\\.test\\. hostmaster\\.example\\.test\\. ${s} `);

let member: string;
/** the serial before the one-record change */
let before1: number;
/** the serial right after it */
let after1: number;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gslbd-ixfr-'));
  path = join(dir, 'gslbd.db');
  d = await start(path);
  await makeService(d, { name: 'ns1', domain: 'ns1.example.test.', ttl: 3600 }, [{ ipAddress: '192.0.2.53' }]);
  const web = await makeService(d, { name: 'web', domain: 'www.example.test.', ttl: 120 }, [{ ipAddress: '192.0.2.1' }, { ipAddress: '2001:db8::1' }]);
  member = web.memberIds[0]!;
  for (let i = 0; i < 20; i++) await makeService(d, { name: `h${i}`, domain: `h${i}.example.test.`, ttl: 30 }, [{ ipAddress: `198.51.100.${i + 1}` }]);
  before1 = serial();
  // the one-record change: one member's address, over REST
  const r = await api(d.url, 'PUT', `/api/v1/members/${member}`, { ipAddress: '192.0.2.2' });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  after1 = serial();
  assert.notEqual(after1, before1);
});
after(async () => {
  await d?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The answer kdig gets for IXFR=<from>, signed with `key`. */
const ixfr = (from: number, key = KEY) => digText(port(), ['-y', key, 'example.test', `IXFR=${from}`], 'kdig');

/** Checks an incremental answer from `from`: new SOA, old SOA, `deleted`, new SOA, `added`, new SOA. */
function assertIncremental(text: string, from: number, to: number, deleted: RegExp[], added: RegExp[]): void {
  assert.doesNotMatch(text, FAILED, text);
  const l = lines(text);
  assert.equal(l.length, 4 + deleted.length + added.length, `records:\n${l.join('\n')}`);
  assert.match(l[0]!, soaLine(to));
  assert.match(l[1]!, soaLine(from));
  deleted.forEach((re, i) => assert.match(l[2 + i]!, re));
  assert.match(l[2 + deleted.length]!, soaLine(to));
  added.forEach((re, i) => assert.match(l[3 + deleted.length + i]!, re));
  assert.match(l.at(-1)!, soaLine(to));
}

test('kdig IXFR after a one-record REST change gets only the difference, every message TSIG-signed', async () => {
  const text = await ixfr(before1);
  assertIncremental(text, before1, after1, [/^www\.example\.test\. 120 IN A 192\.0\.2\.1$/], [/^www\.example\.test\. 120 IN A 192\.0\.2\.2$/]);
  assert.match(text, /\sTSIG\s/, 'signed');
  assert.match(d.logs.text(), /"type":"IXFR","from":\d+,"answer":"incremental"/);
});

test('an IXFR from further back gets the differences condensed into one', async () => {
  // 30 serials back: the last 15 services (a member, then a service: two serials each) and the www change
  const from = before1 - 30;
  const text = await ixfr(from);
  const added = Array.from({ length: 15 }, (_, i) => new RegExp(`^h${i + 5}\\.example\\.test\\. 30 IN A 198\\.51\\.100\\.${i + 6}$`));
  // canonical order: h10…h19 sort before h5…h9, www last
  const order = [...added.slice(5), ...added.slice(0, 5), /^www\.example\.test\. 120 IN A 192\.0\.2\.2$/];
  assertIncremental(text, from, after1, [/^www\.example\.test\. 120 IN A 192\.0\.2\.1$/], order);
});

test('a client at the current serial gets the single SOA', async () => {
  const l = lines(await ixfr(after1));
  assert.equal(l.length, 1, l.join('\n'));
  assert.match(l[0]!, soaLine(after1));
});

test('an unknown or older serial than the journal reaches gets the whole zone, as AXFR', async () => {
  const axfr = lines(await digText(port(), ['-y', KEY, 'example.test', 'AXFR'], 'kdig'));
  for (const from of [after1 + 1000, 0]) {
    const l = lines(await ixfr(from));
    assert.deepEqual(l, axfr, `IXFR=${from}`);
  }
  assert.ok(axfr.some((x) => x.startsWith('h19.example.test.')));
});

test('unsigned (requireTsig) is REFUSED; a tenant key gets only its own records of the difference', async () => {
  assert.match(await digText(port(), ['example.test', `IXFR=${before1}`], 'kdig'), /REFUSED/);
  const from = serial();
  const meta = (tenantId: string) => ({ ttl: 300, origin: 'api' as const, revision: 'api:t', tenantId });
  d.core.apply(planCreateAll(d.core.holder.current, [
    { kind: 'txtrecord', id: 'txt-a', name: 'a1.example.test.', values: ['tenant a'], ...meta('a') },
    { kind: 'txtrecord', id: 'txt-op', name: 'op.example.test.', values: ['operator'], ...meta('default') },
  ] as Row[], 'api:t'));
  const to = serial();
  assertIncremental(await ixfr(from, KEY_A), from, to, [], [/^a1\.example\.test\. 300 IN TXT "tenant a"$/]);
  assertIncremental(await ixfr(from), from, to, [], [/^a1\.example\.test\. 300 IN TXT "tenant a"$/, /^op\.example\.test\. 300 IN TXT "operator"$/]);
});

test('a sliced apply records the same differences; a plan above the limit is a step without them, and the journal goes on after it', async () => {
  const meta = { ttl: 300, origin: 'git' as const, revision: 'sliced', tenantId: 'default' };
  const from = serial();
  await d.core.applySliced(planCreateAll(d.core.holder.current, [{ kind: 'txtrecord', id: 'txt-sliced', name: 'sliced.example.test.', values: ['v'], ...meta }] as Row[], 'sliced'));
  const mid = serial();
  assertIncremental(await ixfr(from), from, mid, [], [/^sliced\.example\.test\. 300 IN TXT "v"$/]);
  // 6,000 services in one plan (a git import): recorded without differences
  const big: Row[] = [{ kind: 'pool', id: 'bigp', name: 'bigp', ...meta }, { kind: 'member', id: 'bigm', poolId: 'bigp', ipAddress: '198.18.0.1', port: 80, weight: 1, priority: 0, enabled: true, rumUrl: null, ...meta }];
  for (let i = 0; i < 6000; i++) big.push({ kind: 'service', id: `big${i}`, name: `big${i}`, domain: `b${i}.big.example.test.`, algorithm: 'round-robin', chain: [], whenAllUnhealthy: 'all', asnRules: [], poolId: 'bigp', ...meta } as Row);
  await d.core.applySliced(planCreateAll(d.core.holder.current, big, 'big'), { force: true });
  await d.core.ports.applySettled?.();
  const afterBig = serial();
  const whole = lines(await ixfr(mid));
  assert.ok(whole.length > 6000 && whole.filter((l) => / SOA /.test(l)).length === 2, 'across the large plan: the whole zone');
  const r = await api(d.url, 'PUT', `/api/v1/members/${member}`, { ipAddress: '192.0.2.3' });
  assert.equal(r.status, 200);
  assertIncremental(await ixfr(afterBig), afterBig, serial(), [/^www\.example\.test\. 120 IN A 192\.0\.2\.2$/], [/^www\.example\.test\. 120 IN A 192\.0\.2\.3$/]);
  const back = await api(d.url, 'PUT', `/api/v1/members/${member}`, { ipAddress: '192.0.2.2' });
  assert.equal(back.status, 200);
});

test('over UDP (a DNS worker thread): REFUSED, signed or not (transfers are TCP only)', async () => {
  const text = await digText(port(), ['+notcp', '-y', KEY, 'example.test', `IXFR=${before1}`]);
  assert.match(text, /\(UDP\)/);
  assert.deepEqual(lines(text), [], `no record over UDP:\n${text}`);
  const refused = await udpExchange(port(), dnsPacket.encode({ type: 'query', id: 7, questions: [{ name: 'example.test', type: 'IXFR' }] }));
  assert.equal(refused.readUInt16BE(2) & 0xf, 5, 'REFUSED');
});


test('a restart keeps the journal', async () => {
  const now = serial();
  await d.stop();
  d = await start(path);
  assert.equal(serial(), now);
  // the journal reaches back only to the large plan now: before it, the whole zone
  assert.ok(lines(await ixfr(before1)).length > 6000);
  assertIncremental(await ixfr(now - 1), now - 1, now, [/^www\.example\.test\. 120 IN A 192\.0\.2\.3$/], [/^www\.example\.test\. 120 IN A 192\.0\.2\.2$/]);
  // .2 → .3 → .2 condensed: nothing changed
  assertIncremental(await ixfr(now - 2), now - 2, now, [], []);
});
