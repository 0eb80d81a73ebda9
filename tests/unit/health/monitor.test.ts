import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HealthMonitor } from '../../../runtime/health/monitor.js';
import { HealthView, type HealthEntry } from '../../../runtime/ports/health-view.js';
import { EventBus } from '../../../core/events/bus.js';
import { HEALTHCHECK_DEFAULTS } from '../../../core/model/normalize.js';
import type { CheckTarget } from '../../../runtime/health/types.js';
import type { ProbeRecord } from '../../../runtime/health/scheduler.js';

const check = { ...HEALTHCHECK_DEFAULTS, intervalMs: 1000 };
const t: CheckTarget = { key: 'p1|10.0.0.1', poolId: 'p1', ip: '10.0.0.1', port: 80, check, checkKey: 'k', checkId: 'hc' };

function setup() {
  const log: string[] = [];
  const writes: HealthEntry[] = [];
  const view = new HealthView();
  const bus = new EventBus((err) => { throw err; });
  bus.on('ws_message', (m) => log.push(`ws:${m.type}`));
  bus.on('health_transition', (e) => log.push(`transition:${e.healthy}`));
  const sink = { write: (_p: string, _ip: string, e: HealthEntry) => { writes.push({ ...e }); log.push('store'); }, remove: () => log.push('remove') };
  let now = 0;
  const m = new HealthMonitor({ view, sink, bus, node: 'n1', observe: (d, s) => log.push(`histogram:${d}:${s}`), now: () => now });
  // one record for every probe, as the scheduler does: the monitor's tag stays on it
  const rec: ProbeRecord = { target: t, result: { ok: true, rttMs: 0, detail: '' }, dueAt: 0, startedAt: 0, finishedAt: 0, tag: undefined };
  const probe = (ok: boolean, at: number, rttMs = 3.4) => {
    now = at;
    Object.assign(rec.result, { ok, rttMs });
    Object.assign(rec, { dueAt: at, startedAt: at, finishedAt: at });
    m.record(rec);
  };
  return { log, writes, view, bus, m, probe };
}

test('monitor: optimistic begin, first probe syncs storage, steady probes write nothing', () => {
  const { log, writes, view, m, probe } = setup();
  m.begin(t);
  assert.deepEqual(view.get('p1', '10.0.0.1'), { healthy: true, score: 1, lastChecked: 0, rttMs: 0, node: 'n1' });
  probe(true, 1000);
  probe(true, 2000);
  probe(true, 3000);
  assert.deepEqual(log, ['store'], 'only the first probe writes');
  assert.equal(writes[0]!.healthy, true);
  assert.deepEqual(view.get('p1', '10.0.0.1'), { healthy: true, score: 1, lastChecked: 3000, rttMs: 3, node: 'n1' }, 'view follows every probe');
});

test('monitor: a flip writes storage, then publishes health_update, then the transition, then the histogram', () => {
  const { log, view, bus, m, probe } = setup();
  const ws: unknown[] = [];
  bus.on('ws_message', (msg) => ws.push(msg));
  m.begin(t);
  probe(true, 1000);
  log.length = 0;
  probe(false, 2000);
  assert.deepEqual(log, ['store', 'ws:health_update', 'transition:false', 'histogram:down:1']);
  assert.deepEqual(ws[0], { type: 'health_update', payload: { poolId: 'p1', ipAddress: '10.0.0.1', healthy: false, score: 0, timestamp: 2000, rttMs: 3, node: 'n1' } });
  assert.equal(view.isHealthy('p1', '10.0.0.1'), false);
  log.length = 0;
  probe(false, 3000);
  assert.deepEqual(log, [], 'no effect while the state holds');
  probe(true, 4000);
  assert.deepEqual(log, ['store', 'ws:health_update', 'transition:true', 'histogram:up:1']);
});

test('monitor: end drops the live and stored entries and ignores late results', () => {
  const { log, view, m, probe } = setup();
  m.begin(t);
  probe(false, 1000);
  m.end(t);
  assert.equal(view.get('p1', '10.0.0.1'), undefined);
  assert.ok(log.includes('remove'));
  log.length = 0;
  probe(true, 2000);
  assert.deepEqual(log, []);
  assert.equal(view.get('p1', '10.0.0.1'), undefined);
});

test('view.record: version moves on health, score or a real RTT change, not on every probe', () => {
  const v = new HealthView();
  const e0 = v.record('p', 'a', true, 1, 1, 10, 'n');
  const v0 = v.version;
  v.record('p', 'a', true, 1, 2, 10, 'n');
  v.record('p', 'a', true, 1, 3, 11, 'n');
  assert.equal(v.version, v0, 'lastChecked and a 1 ms RTT wobble keep the version');
  assert.equal(v.get('p', 'a')!.lastChecked, 3, 'the entry itself is current');
  assert.equal(v.get('p', 'a'), e0, 'updated in place');
  v.record('p', 'a', true, 1, 4, 20, 'n');
  assert.equal(v.version, v0 + 1, 'RTT change');
  v.record('p', 'a', false, 0, 5, -1, 'n');
  assert.equal(v.version, v0 + 2, 'health change');
  assert.equal(v.get('p', 'a')!.rttMs, 20, 'a negative RTT keeps the last one');
  v.record('p', 'a', false, 0.5, 6, -1, 'n');
  assert.equal(v.version, v0 + 3, 'score change');
});

test('monitor: probes update the view entry in place, and follow an entry replaced in the view', () => {
  const { view, m, probe } = setup();
  m.begin(t);
  probe(true, 1000, 5);
  const e = view.get('p1', '10.0.0.1')!;
  probe(true, 2000, 6);
  assert.equal(view.get('p1', '10.0.0.1'), e, 'the same object');
  assert.equal(e.lastChecked, 2000);
  // someone else replaces the entry (a restore, another writer): the next probe writes the new one
  view.set('p1', '10.0.0.1', { healthy: true, score: 1, lastChecked: 0, rttMs: 0, node: 'x' });
  probe(false, 3000);
  const now = view.get('p1', '10.0.0.1')!;
  assert.notEqual(now, e);
  assert.deepEqual([now.healthy, now.lastChecked, now.node], [false, 3000, 'n1']);
  assert.equal(e.lastChecked, 2000, 'the replaced object is no longer written');
});

test('monitor: a target that ends and begins again gets fresh state, not the state its old tag points to', () => {
  const { view, m, probe } = setup();
  m.begin(t);
  probe(false, 1000); // down
  assert.equal(view.get('p1', '10.0.0.1')!.healthy, false);
  m.end(t);
  m.begin(t); // optimistic again
  probe(true, 2000);
  const e = view.get('p1', '10.0.0.1')!;
  assert.deepEqual([e.healthy, e.lastChecked], [true, 2000]);
  assert.equal(m.stateOf(t.key)!.probes, 1, 'the new state counted the probe');
});
