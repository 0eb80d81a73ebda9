import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from '../../../runtime/store/db.js';
import { HealthStatusStore } from '../../../runtime/ports/health-status.js';

// core/store/health-status.ts: the writes of one event-loop turn commit together at its end.

const entry = (healthy: boolean, lastChecked: number) => ({ healthy, score: healthy ? 1 : 0, lastChecked, rttMs: 2, node: 'n1' });

test('health status: a turn’s writes commit together at its end; reads and removals see every write before them', async () => {
  const db = openDatabase(':memory:');
  const store = new HealthStatusStore(db);
  const stored = () => db.prepare('SELECT pool_id, ip_address, healthy, last_checked FROM health_status ORDER BY ip_address').all();
  for (let i = 0; i < 500; i++) store.write('p', `10.0.${i >> 8}.${i & 255}`, entry(false, 1));
  store.write('p', '10.0.0.1', entry(true, 2)); // the same endpoint twice in a turn: the last one counts
  assert.equal(stored().length, 0, 'nothing before the end of the turn');
  await new Promise((r) => setImmediate(r));
  assert.equal(stored().length, 500);
  assert.deepEqual(stored()[1], { pool_id: 'p', ip_address: '10.0.0.1', healthy: 1, last_checked: 2 });
  // what is written is the entry at the time of the write, not what the caller's object holds later
  const live = entry(false, 7);
  store.write('p', '10.0.0.5', live);
  live.healthy = true;
  live.lastChecked = 8;
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(db.prepare("SELECT healthy, last_checked FROM health_status WHERE ip_address = '10.0.0.5'").get(), { healthy: 0, last_checked: 7 });
  // loadAll and remove commit what is queued first
  store.write('q', '10.9.0.1', entry(true, 3));
  assert.equal(store.loadAll().filter((e) => e.poolId === 'q').length, 1);
  store.write('q', '10.9.0.2', entry(true, 3));
  store.remove('q', '10.9.0.1');
  assert.deepEqual(store.loadAll().filter((e) => e.poolId === 'q').map((e) => e.ipAddress), ['10.9.0.2']);
  await new Promise((r) => setImmediate(r));
  // a batch that cannot be written is reported, not thrown at the event loop
  const errors: unknown[] = [];
  const failing = new HealthStatusStore(db, (err) => errors.push(err));
  db.exec("CREATE TRIGGER hs_fail BEFORE INSERT ON health_status WHEN NEW.pool_id = 'bad' BEGIN SELECT RAISE(ABORT, 'disk full'); END");
  failing.write('bad', '10.0.0.9', entry(true, 4));
  await new Promise((r) => setImmediate(r));
  assert.equal(errors.length, 1);
  // flush at shutdown writes the rest, and after close it does nothing
  store.write('p', '10.0.0.2', entry(true, 9));
  store.flush();
  assert.equal((db.prepare("SELECT last_checked FROM health_status WHERE ip_address = '10.0.0.2'").get() as { last_checked: number }).last_checked, 9);
  db.close();
  store.write('p', '10.0.0.3', entry(true, 9));
  store.flush();
});
