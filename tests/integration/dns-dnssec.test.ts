import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import dnsPacket from 'dns-packet';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { delv, digText, dnssecKeygen, makeService, staticKeyAnchor, udpExchange } from '../helpers/dns-tools.js';
import { runEntry } from '../helpers/proc.js';
import { execFileSync } from 'node:child_process';

/**
 * DNSSEC online signing (docs/dns.md "DNSSEC") checked by real validators: delv (BIND) trusting
 * only the zone's own KSK, and kdig (Knot) for the wire details. Keys come from dnssec-keygen.
 */
let dir: string;
let ksk: string;
let zsk: string;
let d: TestDaemon;
let plain: TestDaemon;
let port: number;
let anchor: string;

const ZONE = 'example.test';

/** The same names on both daemons: two IPv4 members, an IPv6 service, TXT sets, a zone outside dns.domain. */
async function populate(t: TestDaemon): Promise<void> {
  await makeService(t, { name: 'web', domain: 'www.example.test.' }, [{ ipAddress: '192.0.2.1' }, { ipAddress: '192.0.2.2' }]);
  await makeService(t, { name: 'six', domain: 'v6.example.test.' }, [{ ipAddress: '2001:db8::1' }]);
  await makeService(t, { name: 'one', domain: 'one.deep.example.test.' }, [{ ipAddress: '192.0.2.9' }]);
  await makeService(t, { name: 'other', domain: 'app.other.test.' }, [{ ipAddress: '198.51.100.7' }]);
  for (const [name, values] of [[ZONE, ['v=spf1 -all']], ['txt.example.test', ['hello', 'world']]] as const) {
    const r = await api(t.url, 'POST', '/api/v1/dns/txt', { name, values });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  }
}

const dnssecConfig = (keys: { file: string; role: string; state?: string }[], algorithm = 'ecdsap256sha256') => ({
  dns: { listenAddr: '127.0.0.1', port: 0, domain: ZONE, nsNames: ['ns1.example.test.'], dnssec: { enabled: true, algorithm, keys } },
}) as never;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gslbd-dnssec-'));
  ksk = await dnssecKeygen(dir, ZONE, 'ECDSAP256SHA256', true);
  zsk = await dnssecKeygen(dir, ZONE, 'ECDSAP256SHA256', false);
  d = await startTestDaemon(dnssecConfig([{ file: ksk, role: 'ksk' }, { file: `${zsk}.private`, role: 'zsk' }]));
  plain = await startTestDaemon({ dns: { listenAddr: '127.0.0.1', port: 0, domain: ZONE, nsNames: ['ns1.example.test.'] } } as never);
  await populate(d);
  await populate(plain);
  port = d.ports.dnsPort as number;
  anchor = join(dir, 'anchor.conf');
  writeFileSync(anchor, staticKeyAnchor(readFileSync(`${ksk}.key`, 'utf8')));
});
after(async () => {
  await d?.stop();
  await plain?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The records delv prints as validated (owner, type, data), without TTLs. */
const records = (text: string, type: string) => text.split('\n').filter((l) => !l.startsWith(';') && l.split(/\s+/)[3] === type).map((l) => l.split(/\s+/).slice(4).join(' '));

test('a: positive answers validate with delv trusting only the zone\'s KSK: A, AAAA, SOA, NS, DNSKEY, TXT; over UDP and TCP', async () => {
  const rows: { q: string[]; type: string; want: string[] }[] = [
    { q: ['www.example.test', 'A'], type: 'A', want: ['192.0.2.1', '192.0.2.2'] },
    { q: ['v6.example.test', 'AAAA'], type: 'AAAA', want: ['2001:db8::1'] },
    { q: ['www.example.test', 'A', '+tcp'], type: 'A', want: ['192.0.2.1', '192.0.2.2'] },
    { q: ['one.deep.example.test', 'A'], type: 'A', want: ['192.0.2.9'] },
    { q: [ZONE, 'SOA'], type: 'SOA', want: [] },
    { q: [ZONE, 'NS'], type: 'NS', want: ['ns1.example.test.'] },
    { q: [ZONE, 'DNSKEY'], type: 'DNSKEY', want: [] },
    { q: [ZONE, 'TXT'], type: 'TXT', want: ['"v=spf1 -all"'] },
    { q: ['txt.example.test', 'TXT'], type: 'TXT', want: ['"hello"', '"world"'] },
  ];
  for (const r of rows) {
    const text = await delv(port, anchor, ZONE, r.q);
    assert.match(text, /^; fully validated$/m, `${r.q.join(' ')}:\n${text}`);
    const got = records(text, r.type);
    if (r.want.length) assert.deepEqual(got.sort(), r.want, `${r.q.join(' ')}:\n${text}`);
    else assert.ok(got.length > 0, text);
    assert.match(text, new RegExp(`RRSIG\\s+${r.type} 13 `), `${r.q.join(' ')}: signed with algorithm 13`);
  }
  const keys = records(await delv(port, anchor, ZONE, [ZONE, 'DNSKEY']), 'DNSKEY').map((k) => k.split(' ').slice(0, 3).join(' '));
  assert.deepEqual(keys.sort(), ['256 3 13', '257 3 13']);
  // the startup line names tags, roles and states; no private key is ever logged
  const line = d.logs.lines.find((l) => l.msg === 'dnssec signing');
  assert.deepEqual(line?.keys, [{ tag: Number(ksk.slice(-5)), role: 'ksk', state: 'active' }, { tag: Number(zsk.slice(-5)), role: 'zsk', state: 'active' }]);
  for (const f of [ksk, zsk]) assert.ok(!d.logs.text().includes(/PrivateKey: (\S+)/.exec(readFileSync(`${f}.private`, 'utf8'))![1]!), 'no private key in the logs');
});

test('b: NXDOMAIN is a compact answer (RFC 9824) and NODATA an NSEC at the name; both validate as negative answers', async () => {
  const rows: { q: string[]; nsec: RegExp }[] = [
    { q: ['nope.example.test', 'A'], nsec: /nope\.example\.test\. NSEC \\000\.nope\.example\.test\. RRSIG NSEC TYPE128/ },
    { q: ['a.b.nope.example.test', 'TXT'], nsec: /NSEC \\000\.a\.b\.nope\.example\.test\. RRSIG NSEC TYPE128/ },
    { q: ['www.example.test', 'TXT'], nsec: /www\.example\.test\. NSEC \\000\.www\.example\.test\. A RRSIG NSEC$/m },
    { q: ['www.example.test', 'AAAA'], nsec: /www\.example\.test\. NSEC \\000\.www\.example\.test\. A RRSIG NSEC$/m },
    { q: ['txt.example.test', 'A'], nsec: /txt\.example\.test\. NSEC \\000\.txt\.example\.test\. TXT RRSIG NSEC$/m },
    { q: ['deep.example.test', 'A'], nsec: /deep\.example\.test\. NSEC \\000\.deep\.example\.test\. RRSIG NSEC$/m },
    { q: [ZONE, 'MX'], nsec: /example\.test\. NSEC \\000\.example\.test\. NS SOA TXT RRSIG NSEC DNSKEY$/m },
    { q: [ZONE, 'A', '+tcp'], nsec: /example\.test\. NSEC \\000\.example\.test\. NS SOA TXT RRSIG NSEC DNSKEY$/m },
  ];
  for (const r of rows) {
    const text = await delv(port, anchor, ZONE, r.q);
    assert.match(text, /; negative response, fully validated/, `${r.q.join(' ')}:\n${text}`);
    assert.match(text, r.nsec, `${r.q.join(' ')}:\n${text}`);
  }
});

test('c: on the wire (kdig): compact NXDOMAIN is NOERROR with SOA, NSEC and their RRSIGs; without DO the replies are unsigned', async () => {
  const signed = await digText(port, ['+dnssec', 'nope.example.test', 'A'], 'kdig');
  assert.match(signed, /status: NOERROR/);
  assert.doesNotMatch(signed, /Flags: [^;]*\bad\b/, 'an authoritative server sets no AD');
  const auth = signed.split(/;; AUTHORITY SECTION:\n/)[1]!.split('\n\n')[0]!.split('\n').map((l) => l.split(/\s+/)).map((f) => f.slice(0, f[3] === 'RRSIG' ? 5 : 4).join(' '));
  assert.deepEqual(auth, ['example.test. 60 IN SOA', 'example.test. 60 IN RRSIG SOA', 'nope.example.test. 60 IN NSEC', 'nope.example.test. 60 IN RRSIG NSEC'], signed);
  const unsigned = await digText(port, ['nope.example.test', 'A'], 'kdig');
  assert.match(unsigned, /status: NXDOMAIN/);
  assert.doesNotMatch(unsigned, /RRSIG|NSEC/);
  // DNSKEY is answered without DO too, unsigned
  const keys = await digText(port, [ZONE, 'DNSKEY'], 'kdig');
  assert.equal((keys.match(/\tDNSKEY\t/g) ?? []).length, 2, keys);
  assert.doesNotMatch(keys, /RRSIG/);
});

test('d: queries without DO get the same bytes as from a daemon without DNSSEC', async () => {
  const queries: [string, string][] = [['www.example.test', 'SOA'], ['one.deep.example.test', 'A'], ['v6.example.test', 'AAAA'], [ZONE, 'SOA'], [ZONE, 'NS'], [ZONE, 'ANY'],
    [ZONE, 'TXT'], ['txt.example.test', 'TXT'], ['nope.example.test', 'A'], ['www.example.test', 'TXT'], ['deep.example.test', 'A'], ['app.other.test', 'A'], ['nope.app.other.test', 'A']];
  for (const [name, type] of queries) {
    for (const edns of [false, true]) {
      const q = dnsPacket.encode({ type: 'query', id: 7, flags: dnsPacket.RECURSION_DESIRED, questions: [{ name, type: type as 'A' }],
        additionals: edns ? [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: 0 } as never] : [] });
      const [a, b] = await Promise.all([udpExchange(port, q), udpExchange(plain.ports.dnsPort as number, q)]);
      assert.equal(a.toString('hex'), b.toString('hex'), `${name} ${type} edns=${edns}`);
    }
  }
});

test('e: a zone outside dns.domain is signed with the same keys and validates with its own anchor', async () => {
  const other = join(dir, 'other.conf');
  writeFileSync(other, staticKeyAnchor(readFileSync(`${ksk}.key`, 'utf8').replace(/^example\.test\./m, 'app.other.test.')));
  const text = await delv(port, other, 'app.other.test', ['app.other.test', 'A']);
  assert.match(text, /^; fully validated$/m, text);
  assert.deepEqual(records(text, 'A'), ['198.51.100.7']);
  assert.match(await delv(port, other, 'app.other.test', ['x.app.other.test', 'A']), /negative response, fully validated/);
});

/**
 * A UDP proxy to the daemon that flips one byte of the signature of every RRSIG covering `type`
 * in the answer section, as an attacker on the path would.
 */
async function tamperingProxy(upstream: number, type: string): Promise<{ port: number; flipped: () => number; close: () => void }> {
  const s = createSocket('udp4');
  let flipped = 0;
  s.on('message', (msg, rinfo) => {
    void udpExchange(upstream, msg).then((reply) => {
      const p = dnsPacket.decode(reply);
      for (const a of p.answers ?? []) {
        const sig = a.type === 'RRSIG' && (a.data as { typeCovered: string }).typeCovered === type ? (a.data as { signature: Buffer }).signature : undefined;
        if (!sig) continue;
        const at = reply.indexOf(sig);
        if (at < 0) continue;
        reply[at + 10]! ^= 0x01;
        flipped++;
      }
      s.send(reply, rinfo.port, rinfo.address);
    }, () => undefined);
  });
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  return { port: s.address().port, flipped: () => flipped, close: () => s.close() };
}

test('f: a tampered RRSIG and a key nobody trusts both fail validation', async () => {
  const proxy = await tamperingProxy(port, 'A');
  try {
    const bad = await delv(proxy.port, anchor, ZONE, ['www.example.test', 'A']);
    assert.doesNotMatch(bad, /fully validated/, bad);
    assert.match(bad, /resolution failed|no valid signature|RRSIG failed to verify/, bad);
    assert.ok(proxy.flipped() > 0, 'the proxy changed a signature');
    // the same proxy passes untouched answers of other types: those still validate
    assert.match(await delv(proxy.port, anchor, ZONE, [ZONE, 'SOA']), /^; fully validated$/m);
  } finally { proxy.close(); }
  const stranger = await dnssecKeygen(dir, ZONE, 'ECDSAP256SHA256', true);
  const wrong = join(dir, 'wrong.conf');
  writeFileSync(wrong, staticKeyAnchor(readFileSync(`${stranger}.key`, 'utf8')));
  const text = await delv(port, wrong, ZONE, ['www.example.test', 'A']);
  assert.doesNotMatch(text, /fully validated/, text);
  assert.match(text, /resolution failed|no valid|insecurity proof failed|broken trust chain/, text);
});

test('g: Ed25519 with one combined signing key (CSK) validates', async () => {
  const csk = await dnssecKeygen(dir, ZONE, 'ED25519', true);
  const e = await startTestDaemon(dnssecConfig([{ file: csk, role: 'csk' }], 'ed25519'));
  try {
    await makeService(e, { name: 'web', domain: 'www.example.test.' }, [{ ipAddress: '192.0.2.1' }]);
    const a = join(dir, 'csk.conf');
    writeFileSync(a, staticKeyAnchor(readFileSync(`${csk}.key`, 'utf8')));
    for (const q of [['www.example.test', 'A'], [ZONE, 'DNSKEY'], [ZONE, 'SOA']]) {
      const text = await delv(e.ports.dnsPort as number, a, ZONE, q);
      assert.match(text, /^; fully validated$/m, text);
      assert.match(text, /RRSIG\s+\S+ 15 /, text);
    }
    assert.match(await delv(e.ports.dnsPort as number, a, ZONE, ['nope.example.test', 'A']), /negative response, fully validated/);
  } finally { await e.stop(); }
});

/** A UDP proxy that takes DNSKEY answers from one server and every other answer from another. */
async function splitProxy(dnskeyPort: number, otherPort: number): Promise<{ port: number; close: () => void }> {
  const s = createSocket('udp4');
  s.on('message', (msg, rinfo) => {
    const type = dnsPacket.decode(msg).questions?.[0]?.type;
    void udpExchange(type === 'DNSKEY' ? dnskeyPort : otherPort, msg).then((reply) => s.send(reply, rinfo.port, rinfo.address), () => undefined);
  });
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  return { port: s.address().port, close: () => s.close() };
}

test('h: a ZSK pre-publish rollover validates at every step, also for a resolver holding the previous step\'s keys or signatures', async () => {
  const zsk2 = await dnssecKeygen(dir, ZONE, 'ECDSAP256SHA256', false);
  const tag = (f: string) => Number(f.slice(-5));
  const steps = [
    { name: '1 start', keys: [{ file: ksk, role: 'ksk' }, { file: zsk, role: 'zsk' }], dnskeys: 2, signer: tag(zsk) },
    { name: '2 new ZSK published', keys: [{ file: ksk, role: 'ksk' }, { file: zsk, role: 'zsk' }, { file: zsk2, role: 'zsk', state: 'publish' }], dnskeys: 3, signer: tag(zsk) },
    { name: '3 new ZSK signs, old one retired', keys: [{ file: ksk, role: 'ksk' }, { file: zsk, role: 'zsk', state: 'retired' }, { file: zsk2, role: 'zsk' }], dnskeys: 3, signer: tag(zsk2) },
    { name: '4 old ZSK removed', keys: [{ file: ksk, role: 'ksk' }, { file: zsk2, role: 'zsk' }], dnskeys: 2, signer: tag(zsk2) },
  ];
  const daemons: TestDaemon[] = [];
  try {
    for (const s of steps) {
      const t = await startTestDaemon(dnssecConfig(s.keys));
      daemons.push(t);
      await makeService(t, { name: 'web', domain: 'www.example.test.' }, [{ ipAddress: '192.0.2.1' }]);
    }
    const ports = daemons.map((t) => t.ports.dnsPort as number);
    for (const [i, s] of steps.entries()) {
      const keys = await delv(ports[i]!, anchor, ZONE, [ZONE, 'DNSKEY']);
      assert.match(keys, /^; fully validated$/m, `${s.name}:\n${keys}`);
      assert.equal(records(keys, 'DNSKEY').length, s.dnskeys, `${s.name}: DNSKEY set\n${keys}`);
      for (const q of [['www.example.test', 'A'], [ZONE, 'SOA']]) {
        const text = await delv(ports[i]!, anchor, ZONE, q);
        assert.match(text, /^; fully validated$/m, `${s.name} ${q.join(' ')}:\n${text}`);
        assert.deepEqual(records(text, 'RRSIG').map((r) => Number(r.split(' ')[6])), [s.signer], `${s.name}: signed by ${s.signer}\n${text}`);
      }
      assert.match(await delv(ports[i]!, anchor, ZONE, ['nope.example.test', 'A']), /negative response, fully validated/, s.name);
    }
    // A resolver keeps what it fetched for its TTL: the DNSKEY set of one step with the signatures
    // of another. Each step is safe against its neighbours; skipping one is not.
    const mixes: { name: string; keysFrom: number; restFrom: number; valid: boolean }[] = [
      { name: 'keys of step 1, signatures of step 2', keysFrom: 0, restFrom: 1, valid: true },
      { name: 'keys of step 2, signatures of step 3 (the pre-published key signs)', keysFrom: 1, restFrom: 2, valid: true },
      { name: 'keys of step 3, signatures of step 1 (the retired key still verifies)', keysFrom: 2, restFrom: 0, valid: true },
      { name: 'keys of step 4, signatures of step 3', keysFrom: 3, restFrom: 2, valid: true },
      { name: 'keys of step 1, signatures of step 3: without pre-publication', keysFrom: 0, restFrom: 2, valid: false },
      { name: 'keys of step 4, signatures of step 1: removed before old signatures expired', keysFrom: 3, restFrom: 0, valid: false },
    ];
    for (const m of mixes) {
      const proxy = await splitProxy(ports[m.keysFrom]!, ports[m.restFrom]!);
      try {
        const text = await delv(proxy.port, anchor, ZONE, ['www.example.test', 'A']);
        if (m.valid) assert.match(text, /^; fully validated$/m, `${m.name}:\n${text}`);
        else assert.doesNotMatch(text, /fully validated/, `${m.name}:\n${text}`);
      } finally { proxy.close(); }
    }
  } finally {
    for (const t of daemons) await t.stop();
  }
});

test('i: gslbctl dnssec ds prints what dnssec-dsfromkey prints; dnssec keys lists tags, roles and states, never a private key', async () => {
  const cfg = join(dir, 'config.yaml');
  writeFileSync(cfg, `dns:\n  domain: ${ZONE}\n  dnssec:\n    enabled: true\n    keys:\n      - {file: ${ksk}, role: ksk}\n      - {file: ${zsk}.key, role: zsk}\n`);
  const ds = await runEntry('gslbctl', ['dnssec', 'ds', '--config', cfg]);
  assert.equal(ds.code, 0, ds.stderr);
  const bind = execFileSync('dnssec-dsfromkey', ['-2', `${ksk}.key`], { encoding: 'utf8' }).trim().split(/\s+/);
  assert.deepEqual(ds.stdout.trim().split(/\s+/), [bind[0], '3600', ...bind.slice(1)]);
  const other = await runEntry('gslbctl', ['dnssec', 'ds', '--config', cfg, '--zone', 'app.other.test', '-o', 'json']);
  assert.equal(other.code, 0, other.stderr);
  // the same key under another owner: BIND reads it from a zone file
  const zoneFile = join(dir, 'other.zone');
  writeFileSync(zoneFile, `$TTL 3600\n${readFileSync(`${ksk}.key`, 'utf8').replace(/^example\.test\./m, 'app.other.test.')}`);
  const bindOther = execFileSync('dnssec-dsfromkey', ['-2', '-f', zoneFile, 'app.other.test'], { encoding: 'utf8' }).trim().split(/\s+/);
  assert.deepEqual(JSON.parse(other.stdout).map((r: { zone: string; tag: number; algorithm: number; digestType: number; digest: string }) => [r.zone, String(r.tag), String(r.algorithm), String(r.digestType), r.digest]),
    [[bindOther[0], ...bindOther.slice(3)]]);
  const keys = await runEntry('gslbctl', ['dnssec', 'keys', '--config', cfg]);
  assert.equal(keys.code, 0, keys.stderr);
  assert.match(keys.stdout, new RegExp(`^${Number(ksk.slice(-5))}\\s+13\\s+ksk\\s+active\\s+257\\s`, 'm'));
  assert.match(keys.stdout, new RegExp(`^${Number(zsk.slice(-5))}\\s+13\\s+zsk\\s+active\\s+256\\s`, 'm'));
  for (const f of [ksk, zsk]) {
    const secret = /PrivateKey: (\S+)/.exec(readFileSync(`${f}.private`, 'utf8'))![1]!;
    assert.ok(!keys.stdout.includes(secret) && !ds.stdout.includes(secret), 'no private key in the output');
  }
  // a role that does not match the key: exit 2, the config file's line named
  writeFileSync(cfg, `dns:\n  domain: ${ZONE}\n  dnssec:\n    enabled: true\n    keys:\n      - {file: ${ksk}, role: zsk}\n      - {file: ${zsk}, role: zsk}\n`);
  const bad = await runEntry('gslbctl', ['dnssec', 'ds', '--config', cfg]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /config\.yaml:6: dns\.dnssec\.keys\.0\.role = "zsk": with flags 256 the key's tag is \d+, not \d+/);
});
