import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { HealthBoardReader, HealthBoardWriter, type HealthBoardBuffers } from '../../../runtime/dns/health-board.js';
import type { HealthRow } from '../../../runtime/dns/worker-protocol.js';
import { startWorkerThread } from '../../../runtime/worker-thread.js';
import { HEALTH_READ_MAX_WAIT_MS, refreshHealth, type ServicePlan } from '../../../runtime/dns/service-plan.js';
import type { HealthEntry } from '../../../runtime/ports/health-view.js';

const ipOf = (i: number) => `10.1.${i >> 8}.${i & 255}`;
const rows = (pool: string, n: number, healthy: boolean, score = 0.5): HealthRow[] => Array.from({ length: n }, (_, i) => [pool, ipOf(i), healthy, score, i, 1000 + i]);

test('a reader sees what the writer wrote: entries, verdicts, clears and whole-table replaces', () => {
  const w = new HealthBoardWriter();
  const r = new HealthBoardReader(w.buffers);
  assert.equal(r.get('p', '10.0.0.1'), undefined, 'no entry yet');
  assert.equal(r.isHealthy('p', '10.0.0.1'), true, 'no entry: healthy (the optimistic start)');
  const v0 = r.version;
  w.update([['p', '10.0.0.1', false, 0.2, 12.5, 1234], ['p', '10.0.0.2', true, 1, 3, 99], ['q', '10.0.0.1', true, 0.9, 1, 5]], []);
  assert.ok(r.version > v0, 'a batch advances the version');
  assert.deepEqual({ ...r.get('p', '10.0.0.1') }, { healthy: false, score: 0.2, rttMs: 12.5, lastChecked: 1234, node: '' });
  assert.equal(r.isHealthy('p', '10.0.0.1'), false);
  assert.equal(r.isHealthy('q', '10.0.0.1'), true, 'the same address in another pool is its own endpoint');
  assert.equal(r.get('q', '10.0.0.1')?.score, 0.9);

  w.update([], [['p', '10.0.0.1']]);
  assert.equal(r.get('p', '10.0.0.1'), undefined, 'cleared: no entry');
  assert.equal(r.isHealthy('p', '10.0.0.1'), true);

  w.replace([['p', '10.0.0.3', false, 0, 0, 0]]);
  assert.equal(r.get('p', '10.0.0.2'), undefined, 'replace clears what the table leaves out');
  assert.equal(r.get('q', '10.0.0.1'), undefined);
  assert.equal(r.isHealthy('p', '10.0.0.3'), false, 'an endpoint first seen after the reader looked it up is found');
  assert.equal(w.size, 4, 'slots are kept for cleared endpoints');
});

test('the board grows in place: a reader made before sees every endpoint written after', () => {
  const w = new HealthBoardWriter();
  const r = new HealthBoardReader(w.buffers);
  assert.equal(r.isHealthy('pool-with-a-rather-long-identifier', ipOf(4000)), true);
  w.update(rows('pool-with-a-rather-long-identifier', 20_000, false), []);
  assert.equal(w.size, 20_000);
  for (const i of [0, 1023, 1024, 4000, 19_999]) {
    assert.equal(r.isHealthy('pool-with-a-rather-long-identifier', ipOf(i)), false, `endpoint ${i}`);
    assert.equal(r.get('pool-with-a-rather-long-identifier', ipOf(i))?.rttMs, i);
  }
  assert.equal(r.isHealthy('other', ipOf(5)), true, 'an endpoint never written is healthy');
});

test('a table with more unserved endpoints than served ones moves to a new board, which readers adopt', () => {
  const w = new HealthBoardWriter();
  const r = new HealthBoardReader(w.buffers);
  let moved: HealthBoardBuffers | undefined;
  w.onNewBoard = (b) => { moved = b; };
  w.replace(rows('old', 60_000, true));
  w.replace(rows('new', 10, false));
  assert.equal(moved, undefined, '59,990 unserved: under 65,536, the same board');
  w.replace(rows('old', 70_000, true));
  assert.equal(moved, undefined, 'every endpoint served: the same board');
  assert.equal(w.size, 70_010);
  const before = r.version;
  w.replace([...rows('new', 10, false), ['new', '192.0.2.1', false, 0, 0, 0]]);
  assert.ok(moved, 'moved once the unserved slots outnumber the served ones (and 65,536)');
  assert.equal(w.size, 11, 'the new board holds the served endpoints only');
  r.adopt(moved);
  assert.ok(r.version > before, 'the version goes on from the old board (no plan keeps a stale state)');
  assert.equal(r.isHealthy('new', '192.0.2.1'), false);
  assert.equal(r.isHealthy('new', ipOf(3)), false);
  assert.equal(r.get('old', ipOf(3)), undefined, 'unserved endpoints are gone');
});

test('a worker thread refreshing a plan never commits half of a batch', { timeout: 120_000 }, async () => {
  const members = 2000;
  const w = new HealthBoardWriter();
  w.replace(rows('p', members, true));
  const worker = startWorkerThread(import.meta.url, '../../helpers/board-reader-worker', { workerData: { board: w.buffers, members }, execArgv: [] });
  try {
    await once(worker, 'message');
    let busy = false;
    worker.once('message', () => { busy = true; });
    const up = rows('p', members, true);
    const down = rows('p', members, false);
    // whole tables, alternately all healthy and all unhealthy, every 2 ms, until the reader has
    // committed 20 refreshes meanwhile and at least 300 batches were written
    let batches = 0;
    while (!busy || batches < 300) {
      w.replace(batches % 2 ? up : down);
      batches++;
      await new Promise((r) => setTimeout(r, 2));
    }
    const done = once(worker, 'message');
    worker.postMessage('stop');
    const [counts] = await done as [{ all: number; none: number; mixed: number; refreshes: number; forced: number }];
    // A read that waited HEALTH_READ_MAX_WAIT_MS is taken as it is (a loaded machine can make a
    // thread wait that long): the worker counts it apart. Every other committed state is whole.
    assert.equal(counts.mixed, 0, `no committed state mixes two batches (${JSON.stringify(counts)}, ${batches} batches; ${HEALTH_READ_MAX_WAIT_MS} ms reads counted as forced)`);
    assert.ok(counts.refreshes >= 20, `the worker read the board while it was written (${JSON.stringify(counts)})`);
  } finally {
    await worker.terminate();
  }
});

test('refreshHealth keeps a plan\'s state while reads are interrupted, and takes one after HEALTH_READ_MAX_WAIT_MS', () => {
  const members = ['10.0.0.1', '10.0.0.2'].map((ip, i) => ({ ip, family: 4, order: i, weight: 1, priority: 0, rumUrl: null, lat: NaN, lon: NaN, rdata: Buffer.alloc(4) }));
  const plan = { poolId: 'p', members, healthVersion: -1, healthWaitSince: -1, v4: { enabled: [], healthy: [] }, v6: { enabled: [], healthy: [] } } as unknown as ServicePlan;
  let t = 1000;
  const now = () => t;
  let version = 0;
  let healthy = true;
  /** when set, a batch that flips every verdict is written between the reads of the two members */
  let interrupt = false;
  const health = {
    get version() { return version; },
    get: (): HealthEntry | undefined => undefined,
    rttMs: () => -1,
    isHealthy: (_p: string, ip: string) => {
      if (interrupt && ip === '10.0.0.2') { version += 2; healthy = !healthy; }
      return healthy;
    },
  };
  refreshHealth(plan, health, now);
  assert.equal(plan.v4.healthy.length, 2, 'the first read is taken');
  healthy = false;
  version = -1;
  refreshHealth(plan, health, now);
  assert.equal(plan.v4.healthy.length, 2, 'a batch being written (-1): the state stays');
  version = 2;
  interrupt = true;
  for (const dt of [10, 20, HEALTH_READ_MAX_WAIT_MS - 31]) {
    t += dt;
    refreshHealth(plan, health, now);
    assert.equal(plan.v4.healthy.length, 2, `an interrupted read, ${t - 1000} ms after the first refusal: the state stays`);
  }
  t += 1;
  refreshHealth(plan, health, now);
  assert.equal(plan.v4.healthy.length, 1, 'after waiting HEALTH_READ_MAX_WAIT_MS, a read mixing two batches is taken');
  assert.equal(plan.healthWaitSince, -1);
  interrupt = false;
  version += 2;
  healthy = false;
  refreshHealth(plan, health, now);
  assert.equal(plan.v4.healthy.length, 0, 'an uninterrupted read is taken at once');
  healthy = true;
  version += 2;
  interrupt = true;
  refreshHealth(plan, health, now);
  assert.equal(plan.v4.healthy.length, 0, 'the wait starts again from the next refusal');
});
