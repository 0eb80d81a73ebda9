import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptySnapshot, nextSnapshot } from '../../../core/snapshot/snapshot.js';
import { desiredTargets } from '../../../runtime/health/targets.js';
import { staticCheckFields } from '../../../runtime/config/static-pool.js';
import { HEALTHCHECK_DEFAULTS } from '../../../core/model/normalize.js';
import { validateConfigObject } from '../../../runtime/config/load.js';
import type { Row } from '../../../core/model/types.js';

const meta = { origin: 'api' as const, revision: 'r', tenantId: 'default' };
const pool = (id: string): Row => ({ kind: 'pool', id, name: id, ...meta });
const member = (id: string, poolId: string, ip: string, enabled = true): Row =>
  ({ kind: 'member', id, poolId, ipAddress: ip, port: 8080, weight: 1, priority: 0, enabled, rumUrl: null, ...meta });
const hc = (id: string, poolId: string, over = {}): Row => ({ kind: 'healthcheck', id, poolId, ...HEALTHCHECK_DEFAULTS, port: 9000, ...over, ...meta } as Row);

test('targets: one per distinct IP of enabled members of pools with a check, on the check port', () => {
  const rows = [pool('a'), pool('b'), hc('h1', 'a'), member('m1', 'a', '10.0.0.1'), member('m2', 'a', '10.0.0.2', false),
    member('m3', 'a', '10.0.0.1'), member('m4', 'b', '10.0.0.3')];
  const s = nextSnapshot(emptySnapshot(), rows.map((row) => ({ op: 'put' as const, row })), 'r', 0);
  const config = validateConfigObject({});
  const got = desiredTargets(config, s);
  assert.deepEqual([...got.keys()], ['a|10.0.0.1'], 'disabled member, duplicate IP and pool without check are skipped');
  assert.equal(got.get('a|10.0.0.1')!.port, 9000);
});

test('targets: static endpoints only when health.enabled, under pool id static', () => {
  const off = validateConfigObject({ loadbalancer: { endpoints: ['127.0.0.1', '::1'] } });
  assert.equal(desiredTargets(off, emptySnapshot()).size, 0);
  const on = validateConfigObject({ loadbalancer: { endpoints: ['127.0.0.1', '::1'] }, health: { enabled: true, type: 'http', port: 81, checkinterval: '1s', timeout: '300ms', http: { path: '/hz', expectedstatus: 0 } } });
  const got = desiredTargets(on, emptySnapshot());
  assert.deepEqual([...got.keys()], ['static|127.0.0.1', 'static|::1']);
  const f = staticCheckFields(on.health);
  assert.deepEqual([f.type, f.port, f.intervalMs, f.timeoutMs, f.httpPath, f.httpExpectedStatus], ['http', 81, 1000, 300, '/hz', 0]);
});

test('targets: a changed check changes checkKey; unrelated row metadata does not', () => {
  const base = [pool('a'), member('m1', 'a', '10.0.0.1')];
  const snap = (h: Row) => nextSnapshot(emptySnapshot(), [...base, h].map((row) => ({ op: 'put' as const, row })), 'r', 0);
  const config = validateConfigObject({});
  const k1 = desiredTargets(config, snap(hc('h1', 'a'))).get('a|10.0.0.1')!.checkKey;
  const k2 = desiredTargets(config, snap({ ...hc('h1', 'a'), revision: 'other' } as Row)).get('a|10.0.0.1')!.checkKey;
  const k3 = desiredTargets(config, snap(hc('h1', 'a', { timeoutMs: 999 }))).get('a|10.0.0.1')!.checkKey;
  assert.equal(k1, k2);
  assert.notEqual(k1, k3);
});
