import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateConfigObject } from '../../../runtime/config/load.js';
import { emptySnapshot, nextSnapshot } from '../../../core/snapshot/snapshot.js';
import type { MemberRow, PoolRow, ServiceRow } from '../../../core/model/types.js';
import { NameMatch, buildZoneIndex, lookupName } from '../../../runtime/dns/zone-index.js';
import { planService } from '../../../runtime/dns/service-plan.js';

const meta = { origin: 'api' as const, revision: 'r', tenantId: 'default' };
const pool: PoolRow = { kind: 'pool', id: 'p1', name: 'p', ...meta };
const member = (id: string, ip: string): MemberRow => ({ kind: 'member', id, poolId: 'p1', ipAddress: ip, port: 80, weight: 1, priority: 0, enabled: true, rumUrl: null, ...meta });
const service = (id: string, domain: string): ServiceRow => ({ kind: 'service', id, name: id, domain, algorithm: 'round-robin', ttl: 60, poolId: 'p1', chain: [], whenAllUnhealthy: 'all', asnRules: [], ...meta });
const geo = { city: undefined, asn: undefined, endpointLocations: {} };

test('names classify as service, apex, static, empty non-terminal, NXDOMAIN or REFUSED', () => {
  const s = nextSnapshot(emptySnapshot(), [pool, member('m1', '192.0.2.1'), service('s1', 'a.b.example.test.'), service('s2', 'WWW.Other.Test.')].map((row) => ({ op: 'put' as const, row })), 'r', 1_700_000_000_000);
  const plain = validateConfigObject({ dns: { domain: 'example.test' } });
  const withStatic = validateConfigObject({ dns: { domain: 'example.test' }, loadbalancer: { endpoints: ['192.0.2.50'] } });
  const rows: { name: string; cfg: typeof plain; want: string; zone?: string }[] = [
    { name: 'a.b.example.test.', cfg: plain, want: 'service', zone: 'example.test.' },
    { name: 'www.other.test.', cfg: plain, want: 'service', zone: 'www.other.test.' },
    { name: 'example.test.', cfg: plain, want: 'apex', zone: 'example.test.' },
    { name: 'b.example.test.', cfg: plain, want: 'empty' },
    { name: 'zz.example.test.', cfg: plain, want: 'nxdomain', zone: 'example.test.' },
    { name: 'x.www.other.test.', cfg: plain, want: 'nxdomain', zone: 'www.other.test.' },
    { name: 'other.test.', cfg: plain, want: 'refused' },
    { name: 'example.org.', cfg: plain, want: 'refused' },
    { name: '.', cfg: plain, want: 'refused' },
    { name: 'zz.example.test.', cfg: withStatic, want: 'static' },
    { name: 'b.example.test.', cfg: withStatic, want: 'static' },
  ];
  for (const r of rows) {
    const m = lookupName(buildZoneIndex(s, r.cfg, geo, 0, 0), r.name, new NameMatch());
    assert.equal(m.kind, r.want, r.name);
    if (r.zone) assert.equal(m.zone?.name, r.zone, `${r.name} zone`);
  }
  const ix = buildZoneIndex(s, withStatic, geo, 0, 42);
  assert.equal(ix.staticPlan?.members.length, 1);
  assert.equal(ix.main!.soa.readUInt32BE(ix.main!.soa.length - 20), 42, 'serial as given (zone-serial.ts keeps it), not the build time');
});

test('a swap reuses plans of untouched services and rebuilds touched ones', () => {
  const cfg = validateConfigObject({ dns: { domain: 'example.test' } });
  const p2: PoolRow = { ...pool, id: 'p2' };
  const s1 = nextSnapshot(emptySnapshot(), [pool, p2, member('m1', '192.0.2.1'), service('s1', 'a.example.test.'), { ...service('s2', 'b.example.test.'), poolId: 'p2' }].map((row) => ({ op: 'put' as const, row })), 'r1', 1);
  const ix1 = buildZoneIndex(s1, cfg, geo, 0, 0);
  const s2 = nextSnapshot(s1, [{ op: 'put', row: member('m2', '192.0.2.2') }], 'r2', 2);
  const ix2 = buildZoneIndex(s2, cfg, geo, 0, 0, ix1);
  assert.notEqual(ix2.services.get('a.example.test.')!.plan, ix1.services.get('a.example.test.')!.plan, 'pool p1 changed: rebuilt');
  assert.equal(ix2.services.get('a.example.test.')!.plan.members.length, 2);
  assert.equal(ix2.services.get('b.example.test.')!.plan, ix1.services.get('b.example.test.')!.plan, 'pool p2 untouched: reused');
  const ix3 = buildZoneIndex(s2, cfg, geo, 1, 0, ix2);
  assert.notEqual(ix3.services.get('b.example.test.')!.plan, ix2.services.get('b.example.test.')!.plan, 'geo reload: rebuilt');
});

test('the services of one pool share its members; each plan is what planService builds alone', () => {
  const cfg = validateConfigObject({ dns: { domain: 'example.test' } });
  const rows = [pool, member('m1', '192.0.2.1'), member('m2', '2001:db8::2'), { ...member('m3', '192.0.2.3'), enabled: false }, service('s1', 'a.example.test.'), service('s2', 'B.example.test.')];
  const s = nextSnapshot(emptySnapshot(), rows.map((row) => ({ op: 'put' as const, row })), 'r1', 1);
  const ix = buildZoneIndex(s, cfg, geo, 0, 0);
  const a = ix.services.get('a.example.test.')!.plan;
  const b = ix.services.get('b.example.test.')!.plan;
  assert.equal(a.members, b.members, 'one members list for the pool');
  assert.deepEqual(a, planService(s, service('s1', 'a.example.test.'), geo));
  assert.deepEqual(b, planService(s, service('s2', 'B.example.test.'), geo));
  assert.deepEqual(a.members.map((m) => m.ip), ['192.0.2.1', '2001:db8::2']);
  // a member added: the next index gives both services the new list
  const s2 = nextSnapshot(s, [{ op: 'put', row: member('m4', '192.0.2.4') }], 'r2', 2);
  const ix2 = buildZoneIndex(s2, cfg, geo, 0, 0, ix);
  assert.equal(ix2.services.get('a.example.test.')!.plan.members.length, 3);
  assert.equal(ix2.services.get('a.example.test.')!.plan.members, ix2.services.get('b.example.test.')!.plan.members);
});

test('static endpoints: missing weight means 1, weight 0 disables, algorithm aliases resolve', () => {
  const cfg = validateConfigObject({ dns: { domain: 'example.test' }, loadbalancer: { algorithm: 'wrr', endpoints: ['192.0.2.1', '192.0.2.2', '2001:db8::3'], weights: { '192.0.2.2': 0, '2001:db8::3': 5 }, ttl: 15 } });
  const plan = buildZoneIndex(emptySnapshot(), cfg, geo, 0, 0).staticPlan!;
  assert.equal(plan.algorithm, 'weighted-round-robin');
  assert.equal(plan.ttl, 15);
  assert.equal(plan.poolId, 'static');
  assert.deepEqual(plan.members.map((m) => [m.ip, m.weight, m.family]), [['192.0.2.1', 1, 4], ['2001:db8::3', 5, 6]]);
  assert.equal(buildZoneIndex(emptySnapshot(), validateConfigObject({ loadbalancer: { endpoints: ['192.0.2.1'] } }), geo, 0, 0).staticPlan, undefined, 'no dns.domain: not served');
});

test('a plan that touches no DNS table keeps the index and the SOA serial', () => {
  const cfg = validateConfigObject({ dns: { domain: 'example.test' } });
  const s1 = nextSnapshot(emptySnapshot(), [pool, member('m1', '192.0.2.1'), service('s1', 'a.example.test.')].map((row) => ({ op: 'put' as const, row })), 'r1', 1_700_000_000_000);
  const ix1 = buildZoneIndex(s1, cfg, geo, 0, 7);
  const user = { kind: 'user', id: 'u1', email: 'a@example.test', ...meta };
  const s2 = nextSnapshot(s1, [{ op: 'put', row: user }], 'r2', 1_700_000_100_000);
  const ix2 = buildZoneIndex(s2, cfg, geo, 0, 7, ix1);
  assert.equal(ix2.snapshot, s2);
  assert.equal(ix2.services, ix1.services, 'nothing rebuilt');
  assert.equal(ix2.main, ix1.main, 'the zone (and its transfer list) is kept');
  assert.equal(ix2.main!.soa.readUInt32BE(ix2.main!.soa.length - 20), 7, 'serial unchanged');
  const s3 = nextSnapshot(s2, [{ op: 'put', row: member('m2', '192.0.2.2') }], 'r3', 1_700_000_200_000);
  const ix3 = buildZoneIndex(s3, cfg, geo, 0, 8, ix2);
  assert.equal(ix3.main!.soa.readUInt32BE(ix3.main!.soa.length - 20), 8, 'a member change comes with the next serial');
  const ix4 = buildZoneIndex(s3, cfg, geo, 0, 9, ix3);
  assert.notEqual(ix4.main, ix3.main, 'a new serial alone rebuilds the zones');
});
