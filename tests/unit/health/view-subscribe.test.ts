import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HealthView, type HealthEntry } from '../../../runtime/ports/health-view.js';

const entry = (healthy: boolean): HealthEntry => ({ healthy, score: healthy ? 1 : 0, lastChecked: 1, rttMs: 1, node: 'n' });

test('any number of listeners are told every change, in the order they subscribed', () => {
  const v = new HealthView();
  const told: string[] = [];
  v.subscribe(() => told.push('a'));
  v.subscribe(() => told.push('b'));
  v.set('p', '10.0.0.1', entry(true));
  v.version++;
  assert.deepEqual(told, ['a', 'b', 'a', 'b']);
});

test('unsubscribing stops one listener only, also the same function subscribed twice, and twice is harmless', () => {
  const v = new HealthView();
  let a = 0;
  let b = 0;
  const inc = () => { a++; };
  const offFirst = v.subscribe(inc);
  v.subscribe(inc);
  v.subscribe(() => { b++; });
  offFirst();
  offFirst();
  v.touch('p', '10.0.0.1');
  assert.deepEqual([a, b], [1, 1]);
});

test('a listener may unsubscribe while the view tells its listeners: the others of that change are still told', () => {
  const v = new HealthView();
  const told: string[] = [];
  const off = v.subscribe(() => { told.push('a'); off(); });
  v.subscribe(() => told.push('b'));
  v.delete('p', '10.0.0.1');
  v.delete('p', '10.0.0.2');
  assert.deepEqual(told, ['a', 'b', 'b']);
});
