import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildStaticPool, staticPoolOf } from '../../../runtime/config/static-pool.js';
import { validateConfigObject } from '../../../runtime/config/load.js';

// The config file's endpoints as the read-only pool `static` (docs/api.md "The static pool").

test('static pool: members, weights, port and check from the config file', () => {
  const rows: { name: string; given: Record<string, unknown>; want: { members: [string, string, number, number, boolean][]; check: string | undefined } | undefined }[] = [
    { name: 'no endpoints: no pool', given: {}, want: undefined },
    {
      name: 'one member per endpoint in file order on health.port; no check while health.enabled is false',
      given: { loadbalancer: { endpoints: ['192.0.2.2', '2001:db8::1'] }, health: { port: 8081 } },
      want: { members: [['static:192.0.2.2', '192.0.2.2', 8081, 1, true], ['static:2001:db8::1', '2001:db8::1', 8081, 1, true]], check: undefined },
    },
    {
      name: 'a repeated endpoint is one member; weights apply and 0 shows as disabled (DNS leaves it out)',
      given: { loadbalancer: { endpoints: ['192.0.2.1', '192.0.2.2', '192.0.2.1'], weights: { '192.0.2.1': 5, '192.0.2.2': 0 } } },
      want: { members: [['static:192.0.2.1', '192.0.2.1', 80, 5, true], ['static:192.0.2.2', '192.0.2.2', 80, 0, false]], check: undefined },
    },
    {
      name: 'health.enabled: the file\'s check is the pool\'s',
      given: { loadbalancer: { endpoints: ['192.0.2.1'] }, health: { enabled: true, type: 'tcp', port: 9000 } },
      want: { members: [['static:192.0.2.1', '192.0.2.1', 9000, 1, true]], check: 'tcp:9000' },
    },
  ];
  for (const r of rows) {
    const sp = buildStaticPool(validateConfigObject(r.given));
    if (r.want === undefined) { assert.equal(sp, undefined, r.name); continue; }
    assert.ok(sp, r.name);
    assert.deepEqual(sp.pool, { kind: 'pool', id: 'static', name: 'static', origin: 'config', revision: 'config', source: 'loadbalancer.endpoints', tenantId: 'default' }, r.name);
    assert.deepEqual(sp.members.map((m) => [m.id, m.ipAddress, m.port, m.weight, m.enabled]), r.want.members, r.name);
    assert.ok(sp.members.every((m) => m.poolId === 'static' && m.origin === 'config' && m.tenantId === 'default' && m.rumUrl === null && m.priority === 0), r.name);
    assert.equal(sp.healthCheck && `${sp.healthCheck.type}:${sp.healthCheck.port}`, r.want.check, r.name);
    if (sp.healthCheck) assert.deepEqual([sp.healthCheck.id, sp.healthCheck.poolId, sp.healthCheck.origin, sp.healthCheck.source], ['static', 'static', 'config', 'health'], r.name);
  }
});

test('static pool: built once per config', () => {
  const config = validateConfigObject({ loadbalancer: { endpoints: ['192.0.2.1'] } });
  assert.equal(staticPoolOf(config), staticPoolOf(config));
  assert.equal(staticPoolOf(validateConfigObject({})), undefined);
});
