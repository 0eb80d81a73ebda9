import { test } from 'node:test';
import assert from 'node:assert/strict';
import dnsPacket from 'dns-packet';
import { validateConfigObject } from '../../../runtime/config/load.js';
import { emptySnapshot, nextSnapshot, type Snapshot } from '../../../core/snapshot/snapshot.js';
import type { GenericRow, MemberRow, PoolRow, Row, ServiceRow } from '../../../core/model/types.js';
import { buildZoneIndex } from '../../../runtime/dns/zone-index.js';
import { buildZoneRecords } from '../../../runtime/dns/zone-records.js';
import { txtRdata } from '../../../runtime/txt/record.js';
import { MAX_TRANSFER_MESSAGE, TransferEncoder } from '../../../runtime/dns/zone-transfer.js';
import { DecodeStatus, ParsedQuery, decodeQuery } from '../../../runtime/dns/wire-query.js';

const meta = { origin: 'api' as const, revision: 'r', tenantId: 'default' };
const pool = (id: string): PoolRow => ({ kind: 'pool', id, name: id, ...meta });
const member = (id: string, poolId: string, ip: string, more: Partial<MemberRow> = {}): MemberRow =>
  ({ kind: 'member', id, poolId, ipAddress: ip, port: 80, weight: 1, priority: 0, enabled: true, rumUrl: null, ...meta, ...more });
const service = (id: string, domain: string, poolId: string, more: Partial<ServiceRow> = {}): ServiceRow =>
  ({ kind: 'service', id, name: id, domain, algorithm: 'round-robin', ttl: 60, poolId, chain: [], whenAllUnhealthy: 'all', asnRules: [], ...meta, ...more });
const txt = (id: string, name: string, values: string[], ttl = 300, tenantId = 'default'): GenericRow =>
  ({ kind: 'txtrecord', id, name, values, ttl, ...meta, tenantId });
const geo = { city: undefined, asn: undefined, endpointLocations: {} };
const cfg = validateConfigObject({
  dns: { domain: 'example.test', nsNames: ['ns1.example.test', 'ns2.example.test'] },
  tenancy: { delegations: [{ suffix: 'cust.example.test', tenant: 't2' }] },
});

/**
 * A snapshot of `rows`; `txtrecord` rows are set straight into the rows map (the kind is
 * registered by the text-record feature, not here, and the zone builder reads rows generically).
 */
function snapshotOf(rows: Row[], txts: GenericRow[] = []): Snapshot {
  const s = nextSnapshot(emptySnapshot(), rows.map((row) => ({ op: 'put' as const, row })), 'r1', 1_700_000_000_000);
  return txts.length === 0 ? s : { ...s, rows: new Map([...s.rows, ['txtrecord', new Map(txts.map((t) => [t.id, t]))]]) };
}

const ROWS: Row[] = [
  pool('p1'), member('m1', 'p1', '192.0.2.1'), member('m2', 'p1', '2001:db8::1'), member('m3', 'p1', '192.0.2.1', { port: 443 }),
  pool('p2'), member('m4', 'p2', '192.0.2.9', { enabled: false }),
  pool('p3'), member('m5', 'p3', '192.0.2.10', { weight: 0 }),
  pool('p4'), member('m6', 'p4', '198.51.100.7'),
  pool('p5'), member('m7', 'p5', '203.0.113.5', { tenantId: 't2' }),
  service('www', 'www.example.test.', 'p1', { ttl: 120 }),
  service('deep', 'z.deep.example.test.', 'p4'),
  service('a', 'A.example.test', 'p4'),
  service('off', 'off.example.test.', 'p2'),
  service('weightless', 'zero.example.test.', 'p3'),
  service('nopool', 'nopool.example.test.', null as unknown as string, { poolId: null }),
  service('outside', 'app.other.test.', 'p4'),
  service('tenant', 'shop.cust.example.test.', 'p5', { tenantId: 't2' }),
  service('squatter', 'x.cust.example.test.', 'p4'),
];
const TXTS: GenericRow[] = [
  txt('t1', 'example.test', ['v=spf1 -all']),
  txt('t2', 'www.example.test', ['b', 'a'], 30), // values are distinct: runtime/txt refuses a value twice,
  txt('t3', '_dmarc.example.test', ['x'.repeat(300)]),
  txt('t4', 'elsewhere.org', ['not in the zone']),
  txt('t5', 'mail.cust.example.test', ['not this tenant\'s name']),
  txt('t6', 'mail.cust.example.test', ['t2 owns it'], 60, 't2'),
];

/** Records as `owner ttl TYPE data` lines, the way a zone file lists them. */
function render(records: ReturnType<typeof buildZoneRecords>, apex: string): string[] {
  const wireName = (b: Buffer, at: number) => { const l: string[] = []; for (let i = at; b[i] !== 0; i += 1 + b[i]!) l.push(b.toString('latin1', i + 1, i + 1 + b[i]!)); return `${l.join('.')}.`; };
  const rdata = (type: number, rd: Buffer) => {
    if (type === 1) return [...rd].join('.');
    if (type === 28) return Array.from({ length: 8 }, (_, i) => rd.readUInt16BE(i * 2).toString(16)).join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
    if (type === 2) return wireName(rd, 0);
    if (type === 6) return `${wireName(rd, 0)} serial ${rd.readUInt32BE(rd.length - 20)}`;
    const out: string[] = [];
    for (let i = 0; i < rd.length; i += 1 + rd[i]!) out.push(`${rd[i]}:${rd.toString('utf8', i + 1, i + 1 + rd[i]!).slice(0, 12)}`);
    return out.join(' ');
  };
  const name = (rel: Buffer) => { const l: string[] = []; for (let i = 0; i < rel.length; i += 1 + rel[i]!) l.push(rel.toString('latin1', i + 1, i + 1 + rel[i]!)); return [...l, apex].join('.'); };
  const typeName: Record<number, string> = { 1: 'A', 2: 'NS', 6: 'SOA', 16: 'TXT', 28: 'AAAA' };
  return records.map((r) => `${name(r.rel)} ${r.ttl} ${typeName[r.type]} ${rdata(r.type, r.rdata)}`);
}

test('zone content: SOA, NS, then every owner in canonical order with A, AAAA and TXT, SOA last', () => {
  const ix = buildZoneIndex(snapshotOf(ROWS, TXTS), cfg, geo, 0, 5);
  assert.deepEqual(render(buildZoneRecords(ix, ix.main!, cfg), 'example.test.'), [
    'example.test. 3600 SOA ns1.example.test. serial 5',
    'example.test. 3600 NS ns1.example.test.',
    'example.test. 3600 NS ns2.example.test.',
    // the apex TXT comes first; `_` sorts before letters (RFC 4034 §6.1 compares octets)
    'example.test. 300 TXT 11:v=spf1 -all',
    '_dmarc.example.test. 300 TXT 255:xxxxxxxxxxxx 45:xxxxxxxxxxxx',
    'a.example.test. 60 A 198.51.100.7',
    // names under cust.example.test belong to t2: its TXT row and service, not the default tenant's
    'mail.cust.example.test. 60 TXT 10:t2 owns it',
    'shop.cust.example.test. 60 A 203.0.113.5',
    'z.deep.example.test. 60 A 198.51.100.7',
    // one A per distinct address (two members share 192.0.2.1), the service TTL; the TXT set in order
    'www.example.test. 120 A 192.0.2.1',
    'www.example.test. 120 AAAA 2001:db8::1',
    'www.example.test. 30 TXT 1:b',
    'www.example.test. 30 TXT 1:a',
    'example.test. 3600 SOA ns1.example.test. serial 5',
  ]);
  // a service domain outside dns.domain is a zone of its own, transferred on its own
  const other = ix.zones.get('app.other.test.')!;
  assert.deepEqual(render(buildZoneRecords(ix, other, cfg), 'app.other.test.'), [
    'app.other.test. 3600 SOA ns1.example.test. serial 5',
    'app.other.test. 3600 NS ns1.example.test.',
    'app.other.test. 3600 NS ns2.example.test.',
    'app.other.test. 60 A 198.51.100.7',
    'app.other.test. 3600 SOA ns1.example.test. serial 5',
  ]);
});

test('a tenant scope: that tenant\'s services and TXT records between the apex SOA and NS; system: everything', () => {
  const ix = buildZoneIndex(snapshotOf(ROWS, TXTS), cfg, geo, 0, 5);
  const apex = ['example.test. 3600 SOA ns1.example.test. serial 5', 'example.test. 3600 NS ns1.example.test.', 'example.test. 3600 NS ns2.example.test.'];
  const rows: { name: string; scope: string | undefined; want: string[] }[] = [
    { name: 't2', scope: 't2', want: [...apex, 'mail.cust.example.test. 60 TXT 10:t2 owns it', 'shop.cust.example.test. 60 A 203.0.113.5', apex[0]!] },
    { name: 'a tenant with nothing', scope: 'nobody', want: [...apex, apex[0]!] },
    { name: 'system (the default)', scope: undefined, want: render(buildZoneRecords(ix, ix.main!, cfg), 'example.test.') },
  ];
  for (const r of rows) assert.deepEqual(render(buildZoneRecords(ix, ix.main!, cfg, r.scope ?? 'system'), 'example.test.'), r.want, r.name);
  // the default tenant's own names, not t2's (a squatter's row under t2's suffix is not served at all)
  const own = render(buildZoneRecords(ix, ix.main!, cfg, 'default'), 'example.test.');
  assert.ok(own.includes('www.example.test. 120 A 192.0.2.1') && !own.some((l) => l.includes('cust.example.test')));
});

test('TXT data: UTF-8 split into 255-octet character-strings; an empty value is one empty string', () => {
  const rows: { name: string; given: string; want: number[] }[] = [
    { name: 'empty', given: '', want: [0] },
    { name: 'short', given: 'abc', want: [3] },
    { name: 'exactly 255', given: 'x'.repeat(255), want: [255] },
    { name: '256', given: 'x'.repeat(256), want: [255, 1] },
    { name: 'multi-byte characters count as octets', given: 'é'.repeat(200), want: [255, 145] },
  ];
  for (const r of rows) {
    const rd = txtRdata(r.given);
    const lens: number[] = [];
    for (let i = 0; i < rd.length; i += 1 + rd[i]!) lens.push(rd[i]!);
    assert.deepEqual(lens, r.want, r.name);
  }
});

/** Decodes the messages of a transfer with dns-packet (an independent codec) into zone lines. */
function decodeTransfer(msgs: Buffer[]): string[] {
  const out: string[] = [];
  for (const m of msgs) {
    const p = dnsPacket.decode(m);
    for (const a of p.answers ?? []) out.push(`${a.name.toLowerCase()}. ${a.type} ${JSON.stringify((a as { data?: unknown }).data)}`);
  }
  return out;
}

function transfer(s: Snapshot, id = 4660): Buffer[] {
  const ix = buildZoneIndex(s, cfg, geo, 0, 9);
  const req = dnsPacket.encode({ type: 'query', id, questions: [{ name: 'Example.TEST', type: 'AXFR' }] });
  const q = new ParsedQuery();
  assert.equal(decodeQuery(req, q), DecodeStatus.Ok);
  const enc = new TransferEncoder(req, q, ix.main!.name, buildZoneRecords(ix, ix.main!, cfg), 1232);
  const msgs: Buffer[] = [];
  for (let guard = 0; !enc.done && guard < 1000; guard++) msgs.push(enc.next());
  return msgs;
}

test('transfer messages: under 64 KiB, question in the first only, compressed names an independent codec reads', () => {
  const rows: Row[] = [pool('p1'), member('m1', 'p1', '192.0.2.1'), member('m2', 'p1', '2001:db8::1')];
  for (let i = 0; i < 6000; i++) rows.push(service(`s${i}`, `host-${i}.zone-${i % 7}.example.test.`, 'p1'));
  const msgs = transfer(snapshotOf(rows));
  assert.ok(msgs.length >= 3, `${msgs.length} messages`);
  for (const [i, m] of msgs.entries()) {
    assert.ok(m.length <= MAX_TRANSFER_MESSAGE, `message ${i} is ${m.length} bytes`);
    assert.equal(m.readUInt16BE(0), 4660, 'ID of the request');
    assert.equal(m.readUInt16BE(2) & 0x8400, 0x8400, 'QR and AA');
    assert.equal(m.readUInt16BE(4), i === 0 ? 1 : 0, 'QDCOUNT');
  }
  assert.equal(dnsPacket.decode(msgs[0]!).questions![0]!.name, 'Example.TEST', 'the question echoed as asked');
  const lines = decodeTransfer(msgs);
  assert.equal(lines.length, 2 + 2 + 6000 * 2, 'SOA twice, two NS, A and AAAA per service');
  assert.match(lines[0]!, /^example\.test\. SOA .*"serial":9/i);
  assert.match(lines.at(-1)!, /^example\.test\. SOA/i);
  assert.ok(lines.includes('host-5999.zone-0.example.test. AAAA "2001:db8::1"'), 'names rebuilt from pointers');
  const owners = new Set(lines.map((l) => l.split(' ')[0]));
  assert.equal(owners.size, 6000 + 1);
});

test('transfers at one serial are byte-identical, whatever order the rows were stored in', () => {
  const rows: Row[] = [pool('p1'), member('m1', 'p1', '192.0.2.1')];
  const svcs: Row[] = [];
  for (let i = 0; i < 3000; i++) svcs.push(service(`s${i}`, `n${(i * 7919) % 3000}.example.test.`, 'p1'));
  const a = transfer(snapshotOf([...rows, ...svcs], TXTS));
  const b = transfer(snapshotOf([...rows, ...svcs.reverse()], [...TXTS].reverse()));
  assert.equal(a.length, b.length);
  a.forEach((m, i) => assert.ok(m.equals(b[i]!), `message ${i} differs`));
  assert.ok(!transfer(snapshotOf([...rows, ...svcs.slice(1)]))[0]!.equals(a[0]!), 'and a different zone is not');
});
