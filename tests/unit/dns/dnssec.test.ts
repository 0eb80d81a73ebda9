import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createECDH, createPublicKey, verify } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dnskeyRdata, dsRdata, keyPairOf, keyTag, loadDnssecKeys, signWith, type DnssecKey } from '../../../runtime/crypto/dnssec-keys.js';
import { RrsetSigner } from '../../../runtime/dns/dnssec-signer.js';
import { DNSSEC_TYPE, canonicalName, compactNsecRdata, rrsigHeader, signedData, typeBitmap, wireLabels } from '../../../runtime/dns/dnssec-wire.js';
import { nameToWire } from '../../../runtime/dns/wire-reply.js';
import type { Config } from '../../../runtime/config/types.js';

/** The published examples: RFC 6605 §6.1 (ECDSA P-256) and RFC 8080 §6.1 (Ed25519). */
const VECTORS = [
  {
    name: 'RFC 6605 §6.1, ECDSAP256SHA256', algorithm: 13, owner: 'example.net.',
    secret: 'GU6SnQ/Ou+xC5RumuIUIuJZteXT2z0O/ok1s38Et6mQ=',
    publicKey: 'GojIhhXUN/u4v54ZQqGSnyhWJwaubCvTmeexv7bR6edbkrSqQpF64cYbcB7wNcP+e+MAnLr+Wi9xMWyQLc8NAA==',
    tag: 55648, ds: 'b4c8c1fe2e7477127b27115656ad6256f424625bf5c1e2770ce6d6e37df61d17',
  },
  {
    name: 'RFC 8080 §6.1, ED25519', algorithm: 15, owner: 'example.com.',
    secret: 'ODIyNjAzODQ2MjgwODAxMjI2NDUxOTAyMDQxNDIyNjI=',
    publicKey: 'l02Woi0iS8Aa25FQkUd9RMzZHJpBoRQwAQEX1SxZJA4=',
    tag: 3613, ds: '3aa5ab37efce57f737fc1627013fee07bdf241bd10f3b1964ab55c78e79a304b',
  },
];

test('key pair, key tag (RFC 4034 Appendix B) and DS digest (SHA-256) match the RFC examples', () => {
  for (const v of VECTORS) {
    const pair = keyPairOf(v.algorithm, Buffer.from(v.secret, 'base64'));
    assert.equal(pair.publicKey.toString('base64'), v.publicKey, v.name);
    const dnskey = dnskeyRdata(257, v.algorithm, pair.publicKey);
    assert.equal(keyTag(dnskey), v.tag, v.name);
    const ds = dsRdata(v.owner, dnskey);
    assert.equal(ds.readUInt16BE(0), v.tag, v.name);
    assert.equal(ds[2], v.algorithm, v.name);
    assert.equal(ds[3], 2, `${v.name}: digest type SHA-256`);
    assert.equal(ds.subarray(4).toString('hex'), v.ds, v.name);
    // the owner compares in canonical (lower-case) form
    assert.deepEqual(dsRdata(v.owner.toUpperCase(), dnskey), ds, v.name);
  }
});

test('a P-256 private key written without its leading zero bytes (as BIND writes about one key in 256) is the same key', () => {
  // a scalar whose first byte is 0: generated until one comes up (bounded)
  let scalar: Buffer | undefined;
  for (let i = 0; i < 20_000 && !scalar; i++) {
    const e = createECDH('prime256v1');
    e.generateKeys();
    const d = e.getPrivateKey();
    if (d.length < 32) scalar = Buffer.concat([Buffer.alloc(32 - d.length), d]);
    else if (d[0] === 0) scalar = d;
  }
  assert.ok(scalar, 'found a scalar with a leading zero byte');
  const whole = keyPairOf(13, scalar);
  const short = keyPairOf(13, scalar.subarray(1));
  assert.deepEqual(short.publicKey, whole.publicKey);
  const data = Buffer.from('signed data');
  assert.ok(verify('sha256', data, { key: createPublicKey(whole.privateKey), dsaEncoding: 'ieee-p1363' }, signWith(13, short.privateKey, data)));
  assert.throws(() => keyPairOf(13, Buffer.alloc(33, 1)), /at most 32 bytes/);
  assert.throws(() => keyPairOf(13, Buffer.alloc(0)), /at most 32 bytes/);
});

test('canonical RRset form: the RFC 6605 signature verifies over it; the RFC 8080 signature is reproduced byte for byte', () => {
  const p256 = keyPairOf(13, Buffer.from(VECTORS[0]!.secret, 'base64'));
  const h = rrsigHeader(1, 13, 3, 3600, Date.UTC(2010, 8, 9, 10, 4, 39) / 1000, Date.UTC(2010, 7, 12, 10, 4, 39) / 1000, 55648, nameToWire('example.net.'));
  const data = signedData(h, nameToWire('www.example.net.'), 1, 3600, [Buffer.from([192, 0, 2, 1])]);
  const sig = Buffer.from('qx6wLYqmh+l9oCKTN6qIc+bw6ya+KJ8oMz0YP107epXAyGmt+3SNruPFKG7tZoLBLlUzGGus7ZwmwWep666VCw==', 'base64');
  assert.ok(verify('sha256', data, { key: p256.privateKey, dsaEncoding: 'ieee-p1363' }, sig));
  // ECDSA signatures are randomised: ours differ from the RFC's but verify the same way
  assert.ok(verify('sha256', data, { key: p256.privateKey, dsaEncoding: 'ieee-p1363' }, signWith(13, p256.privateKey, data)));
  const ed = keyPairOf(15, Buffer.from(VECTORS[1]!.secret, 'base64'));
  const mx = Buffer.concat([Buffer.from([0, 10]), nameToWire('mail.example.com.')]);
  const h2 = rrsigHeader(15, 15, 2, 3600, 1440021600, 1438207200, 3613, nameToWire('example.com.'));
  assert.equal(signWith(15, ed.privateKey, signedData(h2, nameToWire('example.com.'), 15, 3600, [mx])).toString('base64'),
    'oL9krJun7xfBOIWcGHi7mag5/hdZrKWw15jPGrHpjQeRAvTdszaPD+QLs3fx8A4M3e23mRZ9VrbpMngwcrqNAg==');
});

test('canonical RRset form: records sorted by record data, duplicates removed, owner, class IN and the original TTL', () => {
  const rows: { name: string; rdatas: number[][]; want: number[][] }[] = [
    { name: 'one record', rdatas: [[192, 0, 2, 1]], want: [[192, 0, 2, 1]] },
    { name: 'sorted as octets', rdatas: [[192, 0, 2, 9], [10, 0, 0, 1], [192, 0, 2, 10]], want: [[10, 0, 0, 1], [192, 0, 2, 9], [192, 0, 2, 10]] },
    { name: 'duplicates once', rdatas: [[192, 0, 2, 1], [192, 0, 2, 1]], want: [[192, 0, 2, 1]] },
    { name: 'shorter first when a prefix', rdatas: [[3, 97, 98, 99], [2, 97, 98]], want: [[2, 97, 98], [3, 97, 98, 99]] },
  ];
  const header = Buffer.from([0xaa]);
  const owner = nameToWire('a.example.');
  for (const r of rows) {
    const got = signedData(header, owner, 1, 300, r.rdatas.map((x) => Buffer.from(x)));
    const want = Buffer.concat([header, ...r.want.flatMap((rd) => [owner, Buffer.from([0, 1, 0, 1, 0, 0, 1, 44, 0, rd.length]), Buffer.from(rd)])]);
    assert.deepEqual(got, want, r.name);
  }
  assert.deepEqual(canonicalName(Buffer.from('\x03WwW\x07ExAmPlE\x00', 'latin1'), 0), nameToWire('www.example.'));
  assert.equal(wireLabels(nameToWire('www.example.test.')), 3);
  assert.equal(wireLabels(nameToWire('.')), 0);
});

test('NSEC type bitmaps (RFC 4034 §4.1.2) and compact NSEC record data (RFC 9824)', () => {
  const rows: { name: string; types: number[]; want: string }[] = [
    // RFC 4034 §4.3: alfa.example.com. NSEC host.example.com. A MX RRSIG NSEC TYPE1234
    { name: 'RFC 4034 §4.3', types: [1, 15, 46, 47, 1234], want: '0006400100000003041b000000000000000000000000000000000000000000000000000020' },
    { name: 'NXNAME (128) ends window 0 at octet 16', types: [46, 47, 128], want: '00110000000000030000000000000000000080' },
    { name: 'order and repeats do not matter', types: [47, 1, 46, 1], want: '0006400000000003' },
    { name: 'apex set', types: [1, 2, 6, 16, 28, 46, 47, 48], want: '000762008008000380' },
  ];
  for (const r of rows) assert.equal(typeBitmap(r.types).toString('hex'), r.want, r.name);
  const owner = nameToWire('nope.example.');
  assert.deepEqual(compactNsecRdata(owner, [46, 47, 128]), Buffer.concat([Buffer.from([1, 0]), owner, typeBitmap([46, 47, 128])]));
  const name = (last: number) => nameToWire(`${['x'.repeat(62), 'x'.repeat(62), 'x'.repeat(62), 'x'.repeat(last)].join('.')}.`);
  assert.equal(name(62).length, 253);
  assert.equal(compactNsecRdata(name(62), [47])?.length, 2 + 253 + typeBitmap([47]).length, 'the successor of a 253-octet name (255 octets) fits');
  assert.equal(compactNsecRdata(name(63), [47]), undefined, 'the successor of a 254-octet name does not fit');
});

/** A key of `role` and `state` made from a fixed secret (ECDSA P-256). */
function testKey(n: number, role: DnssecKey['role'], state: DnssecKey['state'] = 'active'): DnssecKey {
  const pair = keyPairOf(13, Buffer.alloc(32, n));
  const flags = role === 'zsk' ? 256 : 257;
  const dnskey = dnskeyRdata(flags, 13, pair.publicKey);
  return { file: `k${n}`, role, state, algorithm: 13, flags, tag: keyTag(dnskey), dnskey, privateKey: pair.privateKey };
}

test('the signer: KSKs sign DNSKEY, ZSKs the rest, CSKs both; publish and retired keys only publish', () => {
  const ksk = testKey(1, 'ksk');
  const zsk = testKey(2, 'zsk');
  const pre = testKey(3, 'zsk', 'publish');
  const old = testKey(4, 'zsk', 'retired');
  const csk = testKey(5, 'csk');
  const owner = nameToWire('example.test.');
  const rows: { name: string; keys: DnssecKey[]; type: number; tags: number[] }[] = [
    { name: 'DNSKEY by the KSK', keys: [ksk, zsk, pre, old], type: DNSSEC_TYPE.DNSKEY, tags: [ksk.tag] },
    { name: 'SOA by the active ZSK only', keys: [ksk, zsk, pre, old], type: 6, tags: [zsk.tag] },
    { name: 'CSK signs DNSKEY', keys: [csk], type: DNSSEC_TYPE.DNSKEY, tags: [csk.tag] },
    { name: 'CSK signs A', keys: [csk], type: 1, tags: [csk.tag] },
  ];
  for (const r of rows) {
    const s = new RrsetSigner(r.keys, { validity: 7 * 86400, cacheSize: 10, now: () => 1_700_000_000_000 });
    assert.equal(s.dnskeys.length, r.keys.length, `${r.name}: every key is published`);
    const rd = r.type === DNSSEC_TYPE.DNSKEY ? s.dnskeys : [Buffer.from([192, 0, 2, 1])];
    const sigs = s.sign(owner, 2, r.type, 3600, rd, owner);
    assert.deepEqual(sigs.map((x) => x.readUInt16BE(16)), r.tags, r.name);
    for (const sig of sigs) {
      const key = r.keys.find((k) => k.tag === sig.readUInt16BE(16))!;
      const header = sig.subarray(0, 18 + owner.length);
      assert.equal(header.readUInt32BE(12), 1_700_000_000 - 3600, `${r.name}: inception an hour back`);
      assert.equal(header.readUInt32BE(8), 1_700_000_000 + 7 * 86400, `${r.name}: expiration`);
      assert.ok(verify('sha256', signedData(header, owner, r.type, 3600, rd), { key: key.privateKey, dsaEncoding: 'ieee-p1363' }, sig.subarray(header.length)), r.name);
    }
  }
});

test('the signature cache: keyed by the exact RRset in any order, renewed after a quarter of the validity, bounded', () => {
  let now = 1_700_000_000_000;
  const s = new RrsetSigner([testKey(1, 'ksk'), testKey(2, 'zsk')], { validity: 400, cacheSize: 3, now: () => now });
  const owner = nameToWire('www.example.test.');
  const a = Buffer.from([192, 0, 2, 1]);
  const b = Buffer.from([192, 0, 2, 2]);
  const zone = nameToWire('example.test.');
  const first = s.sign(owner, 3, 1, 60, [a, b], zone);
  assert.equal(s.sign(owner, 3, 1, 60, [b, a], zone), first, 'another order is the same RRset');
  assert.equal(s.signed, 1);
  for (const [name, other] of [
    ['another TTL', () => s.sign(owner, 3, 1, 61, [a, b], zone)],
    ['another subset', () => s.sign(owner, 3, 1, 60, [a], zone)],
    ['another type', () => s.sign(owner, 3, 28, 60, [a, b], zone)],
  ] as const) assert.notEqual(other(), first, name);
  assert.equal(s.signed, 4);
  assert.ok(s.cached <= 3, `bounded: ${s.cached} cached`);
  now += 99_000;
  const again = s.sign(owner, 3, 1, 60, [a], zone);
  assert.equal(s.signed, 4, 'within a quarter of the validity: cached');
  now += 2_000;
  assert.notEqual(s.sign(owner, 3, 1, 60, [a], zone), again, 'past a quarter: signed anew');
  assert.equal(s.signed, 5);
  // a set in use stays while others come and go; one not used for a while is dropped
  for (let i = 0; i < 10; i++) {
    s.sign(owner, 3, 1, 60, [Buffer.from([10, 0, 0, i])], zone);
    assert.equal(s.sign(owner, 3, 1, 60, [a], zone).length, 1);
  }
  assert.equal(s.signed, 15, 'the set in use was never signed again');
  s.sign(owner, 3, 1, 60, [a, b], zone);
  assert.equal(s.signed, 16, 'the first set was dropped');
  assert.ok(s.cached <= 3);
});

const dnssecCfg = (keys: Config['dns']['dnssec']['keys'], algorithm: Config['dns']['dnssec']['algorithm'] = 'ecdsap256sha256'): Config['dns']['dnssec'] =>
  ({ enabled: true, algorithm, keys, signatureValidity: '7d', cacheSize: 10 });

test('keys from dnssec-keygen: tags match the file names and the DS matches dnssec-dsfromkey', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-dnssec-'));
  try {
    for (const [alg, name] of [['ECDSAP256SHA256', 'ecdsap256sha256'], ['ED25519', 'ed25519']] as const) {
      const ksk = execFileSync('dnssec-keygen', ['-q', '-K', dir, '-a', alg, '-f', 'KSK', 'example.test'], { encoding: 'utf8' }).trim();
      const zsk = execFileSync('dnssec-keygen', ['-q', '-K', dir, '-a', alg, 'example.test'], { encoding: 'utf8' }).trim();
      const { keys, problems } = loadDnssecKeys(dnssecCfg([{ file: join(dir, ksk), role: 'ksk', state: 'active' }, { file: join(dir, `${zsk}.private`), role: 'zsk', state: 'active' }], name));
      assert.deepEqual(problems, []);
      assert.deepEqual(keys.map((k) => k.tag), [Number(ksk.slice(-5)), Number(zsk.slice(-5))]);
      // the public key in the .key file is the one derived from the private key
      const pub = readFileSync(join(dir, `${ksk}.key`), 'utf8').split('\n').find((l) => !l.startsWith(';'))!.split(/\s+/).slice(6).join('');
      assert.equal(keys[0]!.dnskey.subarray(4).toString('base64'), pub);
      const ds = execFileSync('dnssec-dsfromkey', ['-2', join(dir, `${ksk}.key`)], { encoding: 'utf8' }).trim().split(/\s+/);
      const mine = dsRdata('example.test.', keys[0]!.dnskey);
      assert.deepEqual([Number(ds[3]), Number(ds[4]), Number(ds[5]), ds[6]!.toLowerCase()], [mine.readUInt16BE(0), mine[2], mine[3], mine.subarray(4).toString('hex')]);
    }
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('key problems: unreadable, not a key, another algorithm, a role that does not match, the same key twice, no active signer', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-dnssec-'));
  try {
    const gen = (...args: string[]) => join(dir, execFileSync('dnssec-keygen', ['-q', '-K', dir, ...args, 'example.test'], { encoding: 'utf8' }).trim());
    const ksk = gen('-a', 'ECDSAP256SHA256', '-f', 'KSK');
    const zsk = gen('-a', 'ECDSAP256SHA256');
    const ed = gen('-a', 'ED25519');
    writeFileSync(join(dir, 'junk.private'), 'hello\n');
    const secret = readFileSync(`${ksk}.private`, 'utf8').match(/PrivateKey: (\S+)/)![1]!;
    const rows: { name: string; keys: Config['dns']['dnssec']['keys']; want: RegExp[] }[] = [
      { name: 'missing file', keys: [{ file: join(dir, 'Knope'), role: 'csk', state: 'active' }], want: [/cannot read .*Knope\.private \(ENOENT\)/] },
      { name: 'not a key', keys: [{ file: join(dir, 'junk.private'), role: 'csk', state: 'active' }], want: [/is not a BIND private key file/] },
      { name: 'another algorithm', keys: [{ file: ed, role: 'csk', state: 'active' }], want: [/algorithm 15, dns.dnssec.algorithm is ecdsap256sha256 \(13\)/] },
      { name: 'a ZSK named as a KSK', keys: [{ file: zsk, role: 'ksk', state: 'active' }, { file: ksk, role: 'zsk', state: 'active' }], want: [/with flags 257 the key's tag is \d+, not \d+/, /with flags 256/] },
      { name: 'twice', keys: [{ file: ksk, role: 'ksk', state: 'active' }, { file: `${ksk}.key`, role: 'ksk', state: 'active' }, { file: zsk, role: 'zsk', state: 'active' }], want: [/the same key as dns.dnssec.keys\[0\]/] },
      { name: 'no active KSK', keys: [{ file: ksk, role: 'ksk', state: 'publish' }, { file: zsk, role: 'zsk', state: 'active' }], want: [/needs an active key with role ksk or csk/] },
      { name: 'no active ZSK', keys: [{ file: ksk, role: 'ksk', state: 'active' }, { file: zsk, role: 'zsk', state: 'retired' }], want: [/needs an active key with role zsk or csk/] },
    ];
    for (const r of rows) {
      const { problems } = loadDnssecKeys(dnssecCfg(r.keys));
      assert.equal(problems.length, r.want.length, `${r.name}: ${JSON.stringify(problems)}`);
      r.want.forEach((re, i) => assert.match(problems[i]!.rule, re, r.name));
      assert.doesNotMatch(JSON.stringify(problems), new RegExp(secret.slice(0, 12).replace(/[+/]/g, '.')), `${r.name}: no key material`);
    }
    assert.ok(readdirSync(dir).length >= 6);
  } finally { rmSync(dir, { recursive: true, force: true }); }
});
