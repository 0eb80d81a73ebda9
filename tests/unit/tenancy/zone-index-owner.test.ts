import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateConfigObject } from '../../../runtime/config/load.js';
import { emptySnapshot, nextSnapshot } from '../../../core/snapshot/snapshot.js';
import type { ServiceRow } from '../../../core/model/types.js';
import { NameMatch, buildZoneIndex, lookupName } from '../../../runtime/dns/zone-index.js';

const geo = { city: undefined, asn: undefined, endpointLocations: {} };
const service = (id: string, domain: string, tenantId: string, origin: 'api' | 'git' = 'api'): ServiceRow => ({
  kind: 'service', id, name: id, domain, algorithm: 'round-robin', ttl: 60, poolId: null, chain: [], whenAllUnhealthy: 'all', asnRules: [],
  origin, revision: 'r', tenantId,
});
const cfg = validateConfigObject({ dns: { domain: 'example.test' }, tenancy: { delegations: [{ suffix: 'acme.example.test', tenant: 'acme' }] } });

test('the zone index serves a name only for the tenant that owns it, and tells once about each row it leaves out', () => {
  const rows = [
    service('own', 'www.acme.example.test.', 'acme'),
    service('foreign', 'shop.acme.example.test.', 'beta'),
    service('gitrow', 'git.acme.example.test.', 'default', 'git'),
    service('apex', 'example.test.', 'beta'),
    service('ns', 'ns1.example.test.', 'default'),
    service('free', 'www.free.test.', 'beta'),
  ];
  const s1 = nextSnapshot(emptySnapshot(), rows.map((row) => ({ op: 'put' as const, row })), 'r', 1_700_000_000_000);
  const told: string[] = [];
  const ix1 = buildZoneIndex(s1, cfg, geo, 0, 0, undefined, (row, why) => told.push(`${row.id}:${why}`));
  const kind = (ix: typeof ix1, n: string) => lookupName(ix, n, new NameMatch()).kind;
  const table: { name: string; want: string; id?: string }[] = [
    { name: 'www.acme.example.test.', want: 'service', id: 'own' },
    { name: 'shop.acme.example.test.', want: 'nxdomain' },
    { name: 'git.acme.example.test.', want: 'nxdomain' },
    { name: 'example.test.', want: 'apex' },
    { name: 'ns1.example.test.', want: 'service', id: 'ns' },
    { name: 'www.free.test.', want: 'service', id: 'free' },
  ];
  for (const r of table) {
    const m = lookupName(ix1, r.name, new NameMatch());
    assert.equal(m.kind, r.want, r.name);
    if (r.id) assert.equal(m.plan?.id, r.id, r.name);
  }
  assert.equal(ix1.main?.name, 'example.test.');
  assert.deepEqual(told.sort(), ['apex:reserved', 'foreign:delegated to another tenant', 'gitrow:delegated to another tenant']);

  // the next swap, with the same rows left out and one more: only the new one is told
  const s2 = nextSnapshot(s1, [{ op: 'put', row: service('late', 'x.acme.example.test.', 'gamma') }], 'r2', 1_700_000_001_000);
  told.length = 0;
  const ix2 = buildZoneIndex(s2, cfg, geo, 0, 0, ix1, (row, why) => told.push(`${row.id}:${why}`));
  assert.deepEqual(told, ['late:delegated to another tenant']);
  assert.equal(kind(ix2, 'x.acme.example.test.'), 'nxdomain');
  assert.equal(lookupName(ix2, 'www.acme.example.test.', new NameMatch()).plan?.id, 'own');
});
