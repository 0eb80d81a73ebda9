import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { dig } from '../helpers/dns-tools.js';

// RFC 2136 UPDATE of TXT records, signed with TSIG (docs/dns.md "Dynamic updates"), driven by the
// real `nsupdate` over UDP and TCP, checked with `dig` and the REST API: grants per key and tenant,
// prerequisites, all-or-nothing, and the name rules of the REST API.

const SYS = randomBytes(24).toString('hex');
const sys = { authorization: `Bearer ${SYS}` };
const ACME = Buffer.from('acme-update-key-of-32-bytes-long').toString('base64');
const OPS = Buffer.from('operator-update-key-for-hmac-sha512-needs-sixty-four-bytes-long!').toString('base64');
const XFR = Buffer.from('a-transfer-key-without-any-grant').toString('base64');
let d: TestDaemon;
let port = 0;

/** Runs nsupdate with `lines` (server and zone lines added), signed with `key` when given; resolves exit code and output. */
function nsupdate(lines: string[], key?: string, tcp = false): Promise<{ code: number; out: string }> {
  const args = [...(key ? ['-y', key] : []), ...(tcp ? ['-v'] : []), '-t', '4'];
  return new Promise((resolve) => {
    const p = execFile('nsupdate', args, { timeout: 20_000 }, (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out: `${stdout}${stderr}` }));
    p.stdin!.end([`server 127.0.0.1 ${port}`, 'zone example.test', ...lines, 'send', ''].join('\n'));
  });
}
const acme = `hmac-sha256:acme-key.example.test:${ACME}`;
const ops = `hmac-sha512:ops-key.example.test:${OPS}`;
const txt = async (name: string) => { const r = await dig(port, [name, 'TXT']); return { status: r.status, answers: r.answers.sort() }; };

before(async () => {
  d = await startTestDaemon({
    dns: {
      listenAddr: '127.0.0.1', port: 0, domain: 'example.test',
      axfr: { tsigKeys: [
        { name: 'acme-key.example.test', algorithm: 'hmac-sha256', secret: ACME },
        { name: 'ops-key.example.test', algorithm: 'hmac-sha512', secret: OPS },
        { name: 'xfr-key.example.test', algorithm: 'hmac-sha256', secret: XFR },
      ] },
      update: { enabled: true, grants: [
        { key: 'acme-key.example.test', tenant: 'acme', suffixes: ['acme.example.test'] },
        { key: 'ops-key.example.test', tenant: 'default' },
      ] },
    },
  } as never, { GSLB_API_KEY: SYS });
  port = d.ports.dnsPort as number;
  assert.equal((await api(d.url, 'POST', '/api/v1/tenants', { id: 'acme' }, sys)).status, 201);
});
after(() => d?.stop());

test('nsupdate adds and deletes TXT values for its tenant, over UDP and TCP; dig and the REST API see them at once', async () => {
  const name = '_acme-challenge.www.acme.example.test';
  let r = await nsupdate([`update add ${name} 60 TXT "tok-1"`], acme);
  assert.equal(r.code, 0, r.out);
  assert.deepEqual(await txt(name), { status: 'NOERROR', answers: ['"tok-1"'] });
  r = await nsupdate([`update add ${name} 60 TXT "tok-2"`, `update delete ${name} TXT "tok-1"`], acme, true);
  assert.equal(r.code, 0, r.out);
  assert.deepEqual((await txt(name)).answers, ['"tok-2"']);
  const key = (await api(d.url, 'POST', '/api/v1/tenants/acme/apikeys', { name: 'k' }, sys)).body.key as string;
  const rows = (await api(d.url, 'GET', '/api/v1/dns/txt', undefined, { authorization: `Bearer ${key}` })).body;
  assert.deepEqual(rows.map((x: { name: string; values: string[]; ttl: number }) => [x.name, x.values, x.ttl]), [[`${name}.`, ['tok-2'], 60]], 'the record is the tenant\'s own');
  // prerequisites: "the set must not exist" fails while it does; "the name is in use" holds
  r = await nsupdate([`prereq nxrrset ${name} TXT`, `update add ${name} 60 TXT "tok-3"`], acme);
  assert.notEqual(r.code, 0);
  assert.match(r.out, /YXRRSET/);
  r = await nsupdate([`prereq yxdomain ${name}`, `update delete ${name} TXT`], acme);
  assert.equal(r.code, 0, r.out);
  assert.equal((await txt(name)).status, 'NXDOMAIN');
});

test('refused: unsigned, a key without a grant, a name outside the grant, another type; a bad MAC is NOTAUTH', async () => {
  const name = 'ok.acme.example.test';
  for (const [lines, key, want] of [
    [[`update add ${name} 60 TXT "x"`], undefined, /REFUSED/],
    [[`update add ${name} 60 TXT "x"`], `hmac-sha256:xfr-key.example.test:${XFR}`, /REFUSED/],
    [['update add other.example.test 60 TXT "x"'], acme, /REFUSED/],
    [[`update add ${name} 60 TXT "x"`, `update add ${name} 60 A 192.0.2.1`], acme, /REFUSED/],
    [[`update add ${name} 60 TXT "x"`], `hmac-sha256:acme-key.example.test:${XFR}`, /NOTAUTH|tsig|TSIG/],
  ] as const) {
    const r = await nsupdate([...lines], key);
    assert.notEqual(r.code, 0, lines.join('; '));
    assert.match(r.out, want, r.out);
  }
  // nothing was written, not even the valid half of the mixed message
  assert.equal((await txt(name)).status, 'NXDOMAIN');
  const log = d.logs.lines.filter((l) => l.msg === 'dns update');
  assert.ok(log.some((l) => /outside|may not change/.test(String(l.reason))), 'the refusal is logged with its reason');
  assert.ok(!d.logs.text().includes(ACME) && !d.logs.text().includes(XFR), 'no secret in the log');
});

test('the name rules of the REST API hold: another tenant\'s name is refused; the operator\'s key may write the apex', async () => {
  const key = (await api(d.url, 'POST', '/api/v1/tenants/acme/apikeys', { name: 'k2' }, sys)).body.key as string;
  // the default tenant owns _owned.acme.example.test through REST
  assert.equal((await api(d.url, 'POST', '/api/v1/dns/txt', { name: '_owned.acme.example.test', values: ['mine'] }, sys)).status, 201);
  const r = await nsupdate(['update add _owned.acme.example.test 60 TXT "theirs"'], acme);
  assert.match(r.out, /REFUSED/);
  assert.deepEqual((await txt('_owned.acme.example.test')).answers, ['"mine"']);
  assert.equal((await api(d.url, 'GET', '/api/v1/dns/txt', undefined, { authorization: `Bearer ${key}` })).body.length, 0);
  const apex = await nsupdate(['update add example.test 300 TXT "v=spf1 -all"'], ops);
  assert.equal(apex.code, 0, apex.out);
  assert.deepEqual((await txt('example.test')).answers, ['"v=spf1 -all"']);
  assert.equal((await dig(port, ['example.test', 'SOA'])).answers.length, 1);
});

test('a captured signed UPDATE sent again is refused (replay), and so is an older signature', async () => {
  const { createSocket } = await import('node:dgram');
  const dnsPacket = (await import('dns-packet')).default;
  const { signRequest, tsigKeyring } = await import('../../runtime/dns/tsig.js');
  const key = tsigKeyring([{ name: 'acme-key.example.test', algorithm: 'hmac-sha256', secret: ACME }]).get('acme-key.example.test.')!;
  const build = (id: number, value: string, now: number) => signRequest(dnsPacket.encode({
    type: 'query', id, flags: 5 << 11 /* opcode UPDATE */, questions: [{ name: 'example.test', type: 'SOA', class: 'IN' }],
    authorities: [{ name: 'replay.acme.example.test', type: 'TXT', class: 'IN', ttl: 60, data: [value] }],
  } as never), key, now).msg;
  const send = (msg: Buffer) => new Promise<number>((resolve, reject) => {
    const s = createSocket('udp4');
    const t = setTimeout(() => { s.close(); reject(new Error('no reply')); }, 3000);
    s.on('message', (m) => { clearTimeout(t); s.close(); resolve(m[3]! & 0xf); });
    s.send(msg, port, '127.0.0.1');
  });
  const now = Math.floor(Date.now() / 1000);
  const first = build(101, 'one', now);
  assert.equal(await send(first), 0, 'NOERROR');
  assert.equal(await send(first), 5, 'the same message again: REFUSED');
  assert.equal(await send(build(102, 'two', now - 5)), 5, 'an older Time Signed: REFUSED');
  assert.equal(await send(build(103, 'three', now + 1)), 0, 'a newer one is accepted');
  assert.deepEqual((await txt('replay.acme.example.test')).answers, ['"one"', '"three"']);
});

test('TXT data that is not UTF-8 is REFUSED, not stored as U+FFFD; UTF-8 text is kept byte for byte', async () => {
  // the operator's key: the acme key's newest Time Signed may sit a second ahead (the replay test)
  const name = 'bytes.example.test';
  // nsupdate's \DDD escapes send the octets 0xff 0xfe: no UTF-8 text has them
  let r = await nsupdate([`update add ${name} 60 TXT "\\255\\254"`], ops);
  assert.notEqual(r.code, 0);
  assert.match(r.out, /REFUSED/, r.out);
  assert.equal((await txt(name)).status, 'NXDOMAIN', 'nothing was stored');
  assert.ok(d.logs.lines.some((l) => l.msg === 'dns update' && /not UTF-8/.test(String(l.reason))), 'the log says why');
  // é (0xc3 0xa9) is UTF-8: stored and served as the same two octets
  r = await nsupdate([`update add ${name} 60 TXT "caf\\195\\169"`], ops);
  assert.equal(r.code, 0, r.out);
  const back = await dig(port, [name, 'TXT']);
  assert.deepEqual(back.answers, ['"caf\\195\\169"']);
});
