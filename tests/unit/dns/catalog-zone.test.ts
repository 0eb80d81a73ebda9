import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import dnsPacket from 'dns-packet';
import { validateConfigObject } from '../../../runtime/config/load.js';
import { NO_RUM } from '../../../runtime/balancer/types.js';
import { Answerer } from '../../../runtime/dns/answer.js';
import { buildCatalog, catalogRecords, memberId, questionUnder } from '../../../runtime/dns/catalog-zone.js';
import { buildZoneRecords } from '../../../runtime/dns/zone-records.js';
import { nameToWire } from '../../../runtime/net/dns-names.js';
import { HealthView } from '../../../runtime/ports/health-view.js';
import { emptySnapshot } from '../../../core/snapshot/snapshot.js';

const SOA = { refresh: 3600, retry: 600, expire: 604800, minimum: 60 };
const q = (name: string, type = 'A') => Buffer.from(dnsPacket.encode({ type: 'query', id: 1, questions: [{ name, type: type as 'A', class: 'IN' }] }));

test('a member id is the SHA-1 of the zone name in lower-cased wire form: stable, case-blind, distinct per zone', () => {
  const want = createHash('sha1').update(Buffer.from('\x07example\x04test\x00', 'latin1')).digest('hex');
  assert.equal(memberId('example.test.'), want);
  assert.equal(memberId('Example.TEST.'), want);
  assert.notEqual(memberId('shop.example.'), want);
});

test('the catalog: SOA, NS invalid., version "2", the members\' PTRs in canonical order, SOA; the apex only for a tenant', () => {
  const c = buildCatalog('catalog.invalid.', ['b.test.', 'a.test.', 'a.test.', 'catalog.invalid.'], 7, SOA);
  const types = c.records.map((r) => r.type);
  assert.deepEqual(types, [6, 2, 16, 12, 12, 6]);
  assert.equal(c.zone.soa.readUInt32BE(c.zone.soa.length - 20), 7);
  assert.deepEqual(c.records[1]!.rdata, nameToWire('invalid.'));
  assert.deepEqual(c.records[2]!.rdata, Buffer.from([1, 0x32]));
  const ids = [memberId('a.test.'), memberId('b.test.')].sort();
  assert.deepEqual(c.records.slice(3, 5).map((r) => r.rel.subarray(1, 41).toString()), ids);
  assert.deepEqual(c.names.get(`${memberId('b.test.')}.zones.catalog.invalid.`)?.get(12), [nameToWire('b.test.')]);
  assert.deepEqual(catalogRecords(c, false).map((r) => r.type), [6, 2, 6]);
});

test('questionUnder: at or under the name, on a label boundary, case-blind; malformed is false', () => {
  const cat = nameToWire('catalog.invalid.');
  assert.ok(questionUnder(q('catalog.invalid'), cat));
  assert.ok(questionUnder(q('X.Zones.CATALOG.invalid'), cat));
  assert.ok(!questionUnder(q('xcatalog.invalid'), cat));
  assert.ok(!questionUnder(q('invalid'), cat));
  assert.ok(!questionUnder(q('www.example.test'), cat));
  assert.ok(!questionUnder(Buffer.alloc(5), cat));
  const cut = q('a.catalog.invalid');
  assert.ok(!questionUnder(cut.subarray(0, cut.length - 8), cat));
});

test('the zone index serves the catalog as a zone; transfers and the answer path read it', () => {
  const config = validateConfigObject({ dns: { domain: 'example.test', axfr: { enabled: true }, catalog: { zone: 'catalog.invalid' } } });
  const snapshot = emptySnapshot();
  const a = new Answerer({
    config, health: new HealthView(), snapshot: () => snapshot, serial: () => 3, rand: Math.random, rum: NO_RUM,
    geo: { city: undefined, asn: undefined, endpointLocations: {} },
  });
  assert.deepEqual(a.steps.map((s) => s.name), ['malformed', 'refuse', 'catalog', 'zone', 'service']);
  const ix = a.index();
  const zone = ix.zones.get('catalog.invalid.');
  assert.ok(zone && ix.catalog?.zone === zone);
  assert.deepEqual(buildZoneRecords(ix, zone, config).map((r) => r.type), [6, 2, 16, 12, 6]);
  const ptr = dnsPacket.decode(a.handle(q(`${memberId('example.test.')}.zones.catalog.invalid`, 'PTR'), '127.0.0.1', true, false) as Buffer);
  assert.deepEqual(ptr.answers?.map((r) => [r.type, (r as { data: unknown }).data]), [['PTR', 'example.test']]);
  const nxReply = a.handle(q('nope.catalog.invalid'), '127.0.0.1', true, false) as Buffer;
  assert.equal(nxReply.readUInt16BE(2) & 0xf, 3);
  const nx = dnsPacket.decode(nxReply);
  assert.equal(nx.authorities?.[0]?.type, 'SOA');
  const nodataReply = a.handle(q('version.catalog.invalid', 'A'), '127.0.0.1', true, false) as Buffer;
  assert.equal(nodataReply.readUInt16BE(2) & 0xf, 0);
  const nodata = dnsPacket.decode(nodataReply);
  assert.equal(nodata.answers?.length, 0);
  // a name outside the catalog is the other steps' business
  assert.equal(dnsPacket.decode(a.handle(q('example.test', 'SOA'), '127.0.0.1', true, false) as Buffer).answers?.[0]?.type, 'SOA');
});
