import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateConfigObject } from '../../../runtime/config/load.js';
import { emptySnapshot, nextSnapshot, type RowMutation, type Snapshot } from '../../../core/snapshot/snapshot.js';
import type { GeoRuleRow, MemberRow, PoolRow, Row, ServiceRow } from '../../../core/model/types.js';
import type { TxtRecordRow } from '../../../runtime/txt/record.js';
import { NameMatch, buildZoneIndex, lookupName, type NameIndex, type ZoneIndex } from '../../../runtime/dns/zone-index.js';
import { IndexImageWriter, NAME_SHARDS, shardOf, type IndexImage } from '../../../runtime/dns/index-image.js';
import { IndexView } from '../../../runtime/dns/index-view.js';

// The DNS workers answer from the index image the main thread writes (docs/dns.md "Workers"): a
// worker's view of it must classify every name and make every plan exactly as the main thread's
// zone index of the same state does, and a one-row write must touch one shard.

const meta = { origin: 'api' as const, revision: 'r', tenantId: 'default' };
const pool = (id: string): PoolRow => ({ kind: 'pool', id, name: id, ...meta });
const member = (id: string, poolId: string, ip: string, more: Partial<MemberRow> = {}): MemberRow => ({ kind: 'member', id, poolId, ipAddress: ip, port: 80, weight: 1, priority: 0, enabled: true, rumUrl: null, ...meta, ...more });
const service = (id: string, domain: string, poolId: string | null, more: Partial<ServiceRow> = {}): ServiceRow => ({ kind: 'service', id, name: id, domain, algorithm: 'round-robin', ttl: 60, poolId, chain: [], whenAllUnhealthy: 'all', asnRules: [], ...meta, ...more });
const georule = (id: string, poolId: string, cidr: string, endpoint: string): GeoRuleRow => ({ kind: 'georule', id, poolId, cidr, endpoint, priority: 0, ...meta });
const txt = (id: string, name: string, values: string[]): TxtRecordRow => ({ kind: 'txtrecord', id, name, values, ttl: 300, ...meta } as TxtRecordRow);
const geo = { city: undefined, asn: undefined, endpointLocations: { '192.0.2.1': { lat: 51.5, lon: -0.1 } } };
const cfg = validateConfigObject({ dns: { domain: 'example.test' }, loadbalancer: { endpoints: [] } });
const withStatic = validateConfigObject({ dns: { domain: 'example.test' }, loadbalancer: { endpoints: ['192.0.2.50', '192.0.2.51'], weights: { '192.0.2.51': 3 } } });
const puts = (rows: Row[]): RowMutation[] => rows.map((row) => ({ op: 'put' as const, row }));

function state(): Snapshot {
  return nextSnapshot(emptySnapshot(), puts([
    pool('p1'), pool('p2'), pool('empty'),
    member('m1', 'p1', '192.0.2.1'), member('m2', 'p1', '2001:db8::2', { weight: 5, priority: 2 }), member('m3', 'p1', '192.0.2.3', { enabled: false }),
    member('m4', 'p1', '192.0.2.4', { weight: 0 }), member('m5', 'p2', '198.51.100.5', { rumUrl: 'https://198.51.100.5/r' }),
    // a row without the fields it may lack (weight, priority, rumUrl): absent is not null to a plan
    { kind: 'member', id: 'm6', poolId: 'p2', ipAddress: '198.51.100.6', port: 80, enabled: true, ...meta } as unknown as MemberRow,
    georule('g1', 'p1', '10.0.0.0/8', '192.0.2.1'), georule('g2', 'p1', '10.1.0.0/16', '2001:db8::2'),
    service('s1', 'www.example.test.', 'p1', { algorithm: 'map-file', chain: ['latency'], ttl: 30 }),
    service('s2', 'a.b.c.example.test.', 'p2', { whenAllUnhealthy: 'servfail' }),
    service('s3', 'WWW.Other.Test.', 'p1', { algorithm: 'asn', asnRules: [{ asn: 64500, endpoint: '192.0.2.1' }, { org: 'Example Org', endpoint: '2001:db8::2' }] }),
    service('s4', 'nopool.example.test.', null),
    service('s5', 'hollow.example.test.', 'empty'),
    txt('t1', 'www.example.test.', ['v=spf1 -all', 'x'.repeat(300)]),
    txt('t2', 'deep.txt.example.test.', ['hello']),
    txt('t3', '_acme.www.other.test.', ['token']),
  ]), 'r1', 1);
}

/** The names a comparison asks about: every kind lookupName can return. */
const QUERIES = [
  'x.y.deep.example.test.', 'y.deep.example.test.', 'deep.example.test.', 'www.example.test.', 'a.b.c.example.test.', 'b.c.example.test.', 'c.example.test.', 'www.other.test.', 'nopool.example.test.',
  'hollow.example.test.', 'example.test.', 'deep.txt.example.test.', 'txt.example.test.', '_acme.www.other.test.', 'x.www.other.test.',
  'zz.example.test.', 'other.test.', 'example.org.', '.', 'new.example.test.', 'gone.example.test.',
];

/** What an answer depends on in a lookup's result (plans compared by what they answer from). */
function summary(ix: NameIndex, name: string): unknown {
  const m = lookupName(ix, name, new NameMatch());
  const p = m.plan;
  return {
    kind: m.kind,
    zone: m.zone && { name: m.zone.name, labels: m.zone.labels, soa: m.zone.soa.toString('hex'), ns: m.zone.ns.map((b) => b.toString('hex')), negativeTtl: m.zone.negativeTtl },
    main: m.zone !== undefined && m.zone === ix.main,
    plan: p && { ...p, members: p.members.map((x) => ({ ...x, rdata: x.rdata.toString('hex') })), v4: undefined, v6: undefined },
    txt: m.txt && { ttl: m.txt.ttl, rdata: m.txt.rdata.map((b) => b.toString('hex')) },
  };
}

function assertSame(ix: ZoneIndex, view: IndexView, what: string): void {
  for (const q of QUERIES) assert.deepEqual(summary(view, q), summary(ix, q), `${what}: ${q}`);
}

const publish = (w: IndexImageWriter, ix: ZoneIndex): IndexImage => {
  const sealed = w.image(ix);
  w.commit(sealed);
  return sealed.image;
};

test('a view of the image answers every kind of name as the zone index does (with and without static endpoints)', () => {
  for (const c of [cfg, withStatic]) {
    const ix = buildZoneIndex(state(), c, geo, 0, 7);
    const w = new IndexImageWriter();
    publish(w, ix);
    assertSame(ix, new IndexView(c, geo, w.full()), c === cfg ? 'plain' : 'static endpoints');
  }
});

for (const how of ['with the index\'s own delta', 'compared name by name'] as const) {
  test(`a write touches only the shards of what it changed, and a view that takes the change answers as a fresh index (${how})`, () => {
    const s1 = state();
    const ix1 = buildZoneIndex(s1, cfg, geo, 0, 7);
    const w = new IndexImageWriter();
    publish(w, ix1);
    const view = new IndexView(cfg, geo, w.full());
    assertSame(ix1, view, 'first');
    const steps: { what: string; muts: RowMutation[]; names: number; pools: number; serial?: number }[] = [
      { what: 'a member added to p1', muts: puts([member('m9', 'p1', '192.0.2.9')]), names: 0, pools: 1 },
      { what: "s2's TTL", muts: puts([service('s2', 'a.b.c.example.test.', 'p2', { whenAllUnhealthy: 'servfail', ttl: 99 })]), names: 1, pools: 0 },
      { what: 'a service added', muts: puts([service('s6', 'new.example.test.', 'p2')]), names: 1, pools: 0 },
      { what: 'a TXT set changed', muts: puts([txt('t2', 'deep.txt.example.test.', ['bye'])]), names: 1, pools: 0 },
      { what: 'a geo rule removed', muts: [{ op: 'delete', kind: 'georule', id: 'g2' }], names: 0, pools: 1 },
      { what: 'the only service of p2 moved to p1, one deleted', muts: [...puts([service('s6', 'new.example.test.', 'p1')]), { op: 'delete', kind: 'service', id: 's5' }], names: -1, pools: -1 },
      { what: 'a deep service (new empty non-terminals)', muts: puts([service('s7', 'x.y.deep.example.test.', 'p1')]), names: -1, pools: 0 },
      { what: 'the deep service deleted (they go)', muts: [{ op: 'delete', kind: 'service', id: 's7' }], names: -1, pools: 0 },
      { what: 'a zone of its own deleted (its TXT set is no longer served)', muts: [{ op: 'delete', kind: 'service', id: 's3' }], names: -1, pools: 0 },
      { what: 'only the serial', muts: [], names: 0, pools: 0, serial: 8 },
    ];
    let s = s1;
    let ix = ix1;
    for (const st of steps) {
      s = nextSnapshot(s, st.muts, 'r', 2);
      const next = buildZoneIndex(s, cfg, geo, 0, st.serial ?? 7, how === 'compared name by name' ? undefined : ix);
      assert.equal(next.delta !== undefined, how !== 'compared name by name');
      const image = publish(w, next);
      if (st.names >= 0) assert.equal(image.names.length, st.names, `${st.what}: name shards written`);
      if (st.pools >= 0) assert.equal(image.pools.length, st.pools, `${st.what}: pool shards written`);
      view.apply(image);
      assertSame(next, view, st.what);
      assertSame(next, new IndexView(cfg, geo, w.full()), `${st.what} (a fresh view of the full image)`);
      ix = next;
    }
    assert.equal(lookupName(view, '_acme.www.other.test.', new NameMatch()).kind, 'refused', 'the zone went with its service');
    assert.equal(view.emptyNonTerminals.has('deep.example.test.'), false);
    assert.equal(view.main!.soa.readUInt32BE(view.main!.soa.length - 20), 8, 'the serial reached the zones');
  });
}

test('an index that serves the same (a plan that touched no DNS table) is no change; a rebuilt plan with the same text writes nothing', () => {
  const s1 = state();
  const ix1 = buildZoneIndex(s1, cfg, geo, 0, 7);
  const w = new IndexImageWriter();
  publish(w, ix1);
  const s2 = nextSnapshot(s1, puts([{ kind: 'user', id: 'u1', ...meta } as Row]), 'r2', 2);
  const ix2 = buildZoneIndex(s2, cfg, geo, 0, 7, ix1);
  assert.equal(w.unchanged(ix2), true);
  // the next DNS write, built on that index, is still compared through its delta: one name, not all
  const s3 = nextSnapshot(s2, puts([service('s4', 'nopool.example.test.', null, { ttl: 5 })]), 'r3', 3);
  const p3 = w.image(buildZoneIndex(s3, cfg, geo, 0, 8, ix2)).pending;
  assert.equal(p3.compared, 1);
  assert.equal(p3.nameShards.size, 1);
  // a geo reload rebuilds every plan on the main thread; the image (what plans are made of) is unchanged
  const reloaded = buildZoneIndex(s1, cfg, geo, 1, 7, ix1);
  assert.equal(w.unchanged(reloaded), false);
  const image = publish(w, reloaded);
  assert.deepEqual([image.names.length, image.pools.length], [0, 0]);
});

test('a view decodes the shards its queries touch, and drops what a replaced shard held', () => {
  const ix = buildZoneIndex(state(), cfg, geo, 0, 7);
  const w = new IndexImageWriter();
  publish(w, ix);
  const view = new IndexView(cfg, geo, w.full());
  assert.deepEqual(view.decodedShards(), { names: 0, pools: 0 }, 'nothing decoded before a query');
  lookupName(view, 'www.example.test.', new NameMatch());
  assert.deepEqual(view.decodedShards(), { names: 1, pools: 1 });
  const before = view.services.get('www.example.test.')!.plan;
  assert.equal(view.services.get('www.example.test.')!.plan, before, 'the plan is kept while its shards are');
  const s2 = nextSnapshot(ix.snapshot, puts([member('m9', 'p1', '192.0.2.9')]), 'r2', 2);
  view.apply(publish(w, buildZoneIndex(s2, cfg, geo, 0, 7, ix)));
  const after = view.services.get('www.example.test.')!.plan;
  assert.notEqual(after, before, "its pool's shard was replaced: the plan is made again");
  assert.ok(after.members.some((m) => m.ip === '192.0.2.9'));
});

test('a shard that cannot be read answers as empty and is reported', () => {
  const bad = new SharedArrayBuffer(3);
  Buffer.from(bad).write('[{x');
  const errors: unknown[] = [];
  const view = new IndexView(cfg, geo, { names: [[shardOf('www.example.test.', NAME_SHARDS), bad]], pools: [], serial: 1, txtNames: 0, full: true });
  view.onError = (err) => errors.push(err);
  assert.equal(lookupName(view, 'www.example.test.', new NameMatch()).kind, 'refused');
  assert.equal(errors.length, 1);
});
