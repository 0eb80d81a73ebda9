import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HealthView, type HealthEntry, type HealthPolicy } from '../../../runtime/ports/health-view.js';
import { healthDelta, healthTable } from '../../../runtime/dns/worker-protocol.js';
import { HealthBoardReader, HealthBoardWriter } from '../../../runtime/dns/health-board.js';
import type { AnswerHealth } from '../../../runtime/dns/service-plan.js';
import type { ZoneIndex } from '../../../runtime/dns/zone-index.js';

const entry = (healthy: boolean, rttMs = 1): HealthEntry => ({ healthy, score: healthy ? 1 : 0, lastChecked: 5, rttMs, node: 'n' });

test('change tracking: off until trackChanges; its first take is everything', () => {
  const v = new HealthView();
  v.set('p', '10.0.0.1', entry(false));
  v.trackChanges();
  assert.deepEqual(v.takeChanges(), { all: true, endpoints: [] });
  assert.deepEqual(v.takeChanges(), { all: false, endpoints: [] }, 'nothing since');
});

test('change tracking: set, record, update, delete and touch name their endpoint once per take', () => {
  const v = new HealthView();
  v.trackChanges();
  v.takeChanges();
  v.set('p', '10.0.0.1', entry(true));
  const e = v.record('p', '10.0.0.2', true, 1, 10, 1, 'n');
  v.record('q', '10.0.0.1', false, 0, 10, 1, 'n');
  v.set('p', '10.0.0.1', entry(false));
  assert.deepEqual(v.takeChanges(), { all: false, endpoints: [['p', '10.0.0.1'], ['p', '10.0.0.2'], ['q', '10.0.0.1']] });

  v.update(e, true, 1, 20, 1.5, 'n');
  assert.deepEqual(v.takeChanges().endpoints, [], 'a probe that changes nothing an answer uses is no change');
  v.update(e, false, 0, 30, 1, 'n');
  assert.deepEqual(v.takeChanges().endpoints, [['p', '10.0.0.2']], 'update is handed the entry and still names its key');

  v.delete('p', '10.0.0.1');
  v.touch('r', '10.0.0.9');
  assert.deepEqual(v.takeChanges(), { all: false, endpoints: [['p', '10.0.0.1'], ['r', '10.0.0.9']] });
});

test('change tracking: a whole pool removed or the version set from outside is everything', () => {
  const v = new HealthView();
  v.trackChanges();
  v.takeChanges();
  v.set('p', '10.0.0.1', entry(true));
  v.delete('p');
  assert.deepEqual(v.takeChanges(), { all: true, endpoints: [] });
  v.version++;
  v.set('p', '10.0.0.1', entry(true));
  assert.deepEqual(v.takeChanges(), { all: true, endpoints: [] });
});

test('every change tells onChange and moves version', () => {
  const v = new HealthView();
  let told = 0;
  v.subscribe(() => { told++; });
  const before = v.version;
  v.set('p', '10.0.0.1', entry(true));
  v.touch('p', '10.0.0.1');
  v.delete('p', '10.0.0.1');
  assert.equal(told, 3);
  assert.equal(v.version, before + 3);
});

/** A zone index with one plan per pool, enough for healthTable. */
const indexOf = (pools: Record<string, string[]>): ZoneIndex => ({
  services: new Map(Object.entries(pools).map(([pool, ips]) => [pool, { plan: { poolId: pool, members: ips.map((ip) => ({ ip })) } }])),
  staticPlan: undefined,
}) as unknown as ZoneIndex;

const snapshotOf = (v: AnswerHealth, pool: string, ips: string[]) => ips.map((ip) => [ip, v.isHealthy(pool, ip), v.get(pool, ip)?.score ?? 1, v.get(pool, ip)?.rttMs ?? 0]);

test('deltas after a table keep the workers\' health board equal to the main view (policy verdicts included)', () => {
  const main = new HealthView();
  // a cluster-like policy: 10.0.0.3 is rejected with no local entry
  const policy: HealthPolicy = (_p, ip, local) => (ip === '10.0.0.3' ? false : local === undefined || local.healthy);
  main.policy = policy;
  const ips = ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4'];
  const ix = indexOf({ p: ips });
  main.trackChanges();
  main.set('p', '10.0.0.1', entry(false));
  const board = new HealthBoardWriter();
  const worker = new HealthBoardReader(board.buffers);
  main.takeChanges();
  board.replace(healthTable(ix, main));
  assert.deepEqual(snapshotOf(worker, 'p', ips), snapshotOf(main, 'p', ips));

  main.set('p', '10.0.0.1', entry(true, 7));
  main.record('p', '10.0.0.2', false, 0, 9, 3, 'n');
  main.delete('p', '10.0.0.4');
  const d1 = healthDelta(main.takeChanges().endpoints, main);
  board.update(d1.rows, d1.cleared);
  assert.deepEqual(snapshotOf(worker, 'p', ips), snapshotOf(main, 'p', ips));

  main.delete('p', '10.0.0.2');
  const d2 = healthDelta(main.takeChanges().endpoints, main);
  assert.deepEqual(d2, { rows: [], cleared: [['p', '10.0.0.2']] }, 'no entry and accepted: the board clears its entry');
  board.update(d2.rows, d2.cleared);
  assert.deepEqual(snapshotOf(worker, 'p', ips), snapshotOf(main, 'p', ips));
  assert.equal(worker.get('p', '10.0.0.2'), undefined);
});
