import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { validateConfigObject } from '../../../runtime/config/load.js';
import { emptySnapshot, getRow, nextSnapshot, type Snapshot } from '../../../core/snapshot/snapshot.js';
import type { Change, Plan } from '../../../core/plan/types.js';
import type { GenericRow, MemberRow, PoolRow, Row, ServiceRow } from '../../../core/model/types.js';
import { buildZoneIndex } from '../../../runtime/dns/zone-index.js';
import { buildZoneRecords } from '../../../runtime/dns/zone-records.js';
import { NameMaps, planDiffSteps, type ZoneDiff } from '../../../runtime/dns/ixfr-diff.js';
import { runAtOnce } from '../../../core/apply/slicer.js';
import { TYPE } from '../../../runtime/dns/wire-reply.js';

// The IXFR journal's differences (runtime/dns/ixfr-diff.ts), worked out from a plan's rows alone,
// against the difference of the whole zones a transfer sends before and after the plan.

const geo = { city: undefined, asn: undefined, endpointLocations: {} };
const cfg = validateConfigObject({
  dns: { domain: 'example.test', nsNames: ['ns1.example.test'] },
  tenancy: { delegations: [{ suffix: 'cust.example.test', tenant: 't2' }] },
});
const NAMES = ['www.example.test.', 'a.example.test.', 'example.test.', 'shop.cust.example.test.', 'x.cust.example.test.', 'app.other.test.', 'sub.app.other.test.', 'Www.Example.Test'];
const TXT_NAMES = [...NAMES, '_acme.app.other.test.', 'nowhere.org.'];
const IPS = ['192.0.2.1', '192.0.2.2', '2001:db8::1', 'not-an-ip'];
const TENANTS = ['default', 't2'];

const meta = (tenantId: string) => ({ origin: 'api' as const, revision: 'r', tenantId });
const pools: PoolRow[] = ['p1', 'p2', 'p3'].map((id) => ({ kind: 'pool', id, name: id, ...meta('default') }));

const memberArb = fc.record({
  id: fc.constantFrom('m1', 'm2', 'm3', 'm4', 'm5'), poolId: fc.constantFrom('p1', 'p2', 'p3'), ip: fc.constantFrom(...IPS),
  enabled: fc.boolean(), weight: fc.constantFrom(0, 1, 5),
}).map(({ id, poolId, ip, enabled, weight }): MemberRow => ({ kind: 'member', id, poolId, ipAddress: ip, port: 80, weight, priority: 0, enabled, rumUrl: null, ...meta('default') }));
const serviceArb = fc.record({
  id: fc.constantFrom('s1', 's2', 's3', 's4', 's5'), domain: fc.constantFrom(...NAMES), poolId: fc.constantFrom('p1', 'p2', 'p3', null),
  tenant: fc.constantFrom(...TENANTS), ttl: fc.constantFrom(30, 60),
}).map(({ id, domain, poolId, tenant, ttl }): ServiceRow => ({ kind: 'service', id, name: id, domain, algorithm: 'round-robin', ttl, poolId, chain: [], whenAllUnhealthy: 'all', asnRules: [], ...meta(tenant) }));
const txtArb = fc.record({
  id: fc.constantFrom('t1', 't2', 't3', 't4'), name: fc.constantFrom(...TXT_NAMES), values: fc.uniqueArray(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 3 }),
  tenant: fc.constantFrom(...TENANTS), ttl: fc.constantFrom(60, 300),
}).map(({ id, name, values, tenant, ttl }): GenericRow => ({ kind: 'txtrecord', id, name: name.toLowerCase(), values, ttl, ...meta(tenant) }));
/** one change: put a row (create or update), or delete a row by id */
const opArb = fc.oneof(
  memberArb.map((row) => ({ put: row as Row })), serviceArb.map((row) => ({ put: row as Row })), txtArb.map((row) => ({ put: row as Row })),
  fc.record({ kind: fc.constantFrom('member', 'service', 'txtrecord'), n: fc.nat(4) }).map((del) => ({ del })),
);

const apply = (s: Snapshot, muts: Parameters<typeof nextSnapshot>[1]) => nextSnapshot(s, muts, 'r', 1_700_000_000_000);

/** A plan of `ops` on `s`: each change with its before and after row (at most one change per row). */
function planOf(s: Snapshot, ops: ({ put: Row } | { del: { kind: string; n: number } })[]): Plan {
  const changes: Change[] = [];
  const seen = new Set<string>();
  for (const op of ops) {
    const kind = 'put' in op ? op.put.kind : op.del.kind;
    const id = 'put' in op ? op.put.id : `${kind === 'member' ? 'm' : kind === 'service' ? 's' : 't'}${op.del.n + 1}`;
    if (seen.has(`${kind}/${id}`)) continue;
    seen.add(`${kind}/${id}`);
    const before = getRow(s, kind, id);
    if ('put' in op) changes.push({ op: before ? 'update' : 'create', kind, id, label: id, before, after: op.put, fields: [] });
    else if (before) changes.push({ op: 'delete', kind, id, label: id, before, fields: [] });
  }
  const counts = { create: 0, update: 0, delete: 0 };
  for (const c of changes) counts[c.op]++;
  return { revision: 'r', origin: 'api', baseVersion: s.version, changes, counts, safety: { safe: true, existing: 0, updates: 0, deletes: 0, maxChangePercent: 100, minExisting: 0 } };
}

/** Every record of every zone of `s` except SOA and NS, as `zone|owner|type|ttl|rdata` strings. */
function zoneSets(s: Snapshot): Map<string, Set<string>> {
  const ix = buildZoneIndex(s, cfg, geo, 0, 7);
  const out = new Map<string, Set<string>>();
  for (const zone of ix.zones.values()) {
    const set = new Set<string>();
    for (const r of buildZoneRecords(ix, zone, cfg)) {
      if (r.type === TYPE.SOA || r.type === TYPE.NS) continue;
      const labels: string[] = [];
      for (let o = 0; o < r.rel.length; o += r.rel[o]! + 1) labels.push(r.rel.toString('latin1', o + 1, o + 1 + r.rel[o]!));
      set.add(`${[...labels, zone.name].join('.')}|${r.type}|${r.ttl}|${r.rdata.toString('hex')}`);
    }
    out.set(zone.name, set);
  }
  return out;
}

/** A diff's records as the same strings, net of records that only changed tenant (a transfer does not show the tenant). */
function diffSets(d: ZoneDiff): { deleted: Set<string>; added: Set<string> } {
  const key = (r: ZoneDiff['deleted'][number]) => `${r.owner}|${r.type}|${r.ttl}|${r.rdata.toString('hex')}`;
  const del = new Set(d.deleted.map(key));
  const add = new Set(d.added.map(key));
  for (const k of [...del]) if (add.has(k)) { del.delete(k); add.delete(k); }
  return { deleted: del, added: add };
}

test('the differences worked out from a plan\'s rows equal the difference of the whole zones, step after step', () => {
  fc.assert(fc.property(fc.array(fc.array(opArb, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 8 }), (steps) => {
    let s = apply(emptySnapshot(), pools.map((row) => ({ op: 'put' as const, row })));
    const maps = new NameMaps();
    runAtOnce(maps.build(s));
    for (const ops of steps) {
      const plan = planOf(s, ops);
      const next = apply(s, plan.changes.map((c) => (c.op === 'delete' ? { op: 'delete' as const, kind: c.kind, id: c.id } : { op: 'put' as const, row: c.after! })));
      const diffs = runAtOnce(planDiffSteps(plan, s, next, cfg, maps));
      assert.ok(diffs, 'a small plan is recorded');
      const before = zoneSets(s);
      const after = zoneSets(next);
      const byZone = new Map(diffs.map((d) => [d.zone, d]));
      for (const zone of new Set([...before.keys(), ...after.keys()])) {
        const b = before.get(zone);
        const a = after.get(zone);
        const d = byZone.get(zone);
        if (!a || !b) { assert.ok(d?.whole, `${zone} appeared or disappeared: marked whole`); continue; }
        assert.ok(!d?.whole, `${zone} exists before and after`);
        const got = d ? diffSets(d) : { deleted: new Set<string>(), added: new Set<string>() };
        assert.deepEqual(got.deleted, new Set([...b].filter((x) => !a.has(x))), `${zone} deleted`);
        assert.deepEqual(got.added, new Set([...a].filter((x) => !b.has(x))), `${zone} added`);
      }
      for (const d of diffs) assert.ok(before.has(d.zone) || after.has(d.zone), `${d.zone} is a zone`);
      maps.advance(plan, next);
      s = next;
    }
  }), { numRuns: 300 });
});

test('a plan above the size limit is not recorded', () => {
  const s = apply(emptySnapshot(), pools.map((row) => ({ op: 'put' as const, row })));
  const rows: Row[] = Array.from({ length: 5001 }, (_, i) => ({ kind: 'service', id: `b${i}`, name: `b${i}`, domain: `b${i}.example.test.`, algorithm: 'round-robin', ttl: 30, poolId: 'p1', chain: [], whenAllUnhealthy: 'all', asnRules: [], ...meta('default') }) as ServiceRow);
  const plan = planOf(s, rows.map((put) => ({ put })));
  const next = apply(s, rows.map((row) => ({ op: 'put' as const, row })));
  const maps = new NameMaps();
  runAtOnce(maps.build(s));
  assert.equal(runAtOnce(planDiffSteps(plan, s, next, cfg, maps)), undefined);
});
