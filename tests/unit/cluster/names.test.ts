import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeToken, encodeToken, healthKey, parseHealthKey, streamName, clusterNames } from '../../../runtime/cluster/names.js';
import { backoffDelay } from '../../../runtime/cluster/connect-options.js';
import { validateConfigObject } from '../../../runtime/config/load.js';

test('tokens round-trip and contain only KV-safe characters', () => {
  for (const v of ['10.0.0.1', '2001:db8::1', 'node a/é', '', 'plain-id_1', '=x']) {
    const t = encodeToken(v);
    assert.match(t, /^[A-Za-z0-9_=-]+$/, v);
    assert.equal(decodeToken(t), v);
  }
});

test('names follow the config; the stream name is made valid', () => {
  assert.equal(streamName('SVC.cfg'), 'SVC_cfg');
  const n = clusterNames(validateConfigObject({ cluster: { id: 'eu.1' }, node: { id: 'n1' } }));
  assert.equal(n.configSubject, 'svc.cfg.eu=2e1');
  assert.equal(n.configStream, 'SVC_cfg');
  assert.equal(n.configBucket, 'SVC_CFG');
  assert.equal(n.plansBucket, 'SVC_CFG_PLANS');
  assert.equal(n.sessionsBucket, 'SVC_SESSIONS');
  const k = healthKey(n, 'n 2', 'pool-1', '2001:db8::1');
  assert.deepEqual(parseHealthKey(k), { cluster: 'eu.1', node: 'n 2', poolId: 'pool-1', ip: '2001:db8::1' });
  assert.equal(parseHealthKey('a.b'), undefined);
});

test('reconnect backoff doubles up to the cap, with jitter in [d/2, d]', () => {
  const d = backoffDelay(500, 8_000, () => 1, () => 0);
  assert.deepEqual([d(), d(), d(), d(), d(), d()], [500, 1000, 2000, 4000, 8000, 8000]);
  const low = backoffDelay(500, 8_000, () => 0, () => 0);
  assert.equal(low(), 250);
});
