import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChunkedMap } from '../../../../core/snapshot/chunked-map.js';

/** A seeded PRNG so a failure reproduces. */
function rng(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}

test('behaves like an insertion-ordered Map under random sets and deletes, and never changes older versions', () => {
  const rand = rng(42);
  let cm = ChunkedMap.empty<number>();
  const model = new Map<string, number>();
  const versions: [ChunkedMap<number>, [string, number][]][] = [];
  for (let round = 0; round < 60; round++) {
    const b = cm.builder();
    const ops = 1 + Math.floor(rand() * 200);
    for (let i = 0; i < ops; i++) {
      const key = `k${Math.floor(rand() * 1500)}`;
      if (rand() < 0.3) { b.delete(key); model.delete(key); } else { const v = Math.floor(rand() * 1e6); b.set(key, v); model.set(key, v); }
    }
    cm = b.build();
    assert.equal(cm.size, model.size);
    assert.deepEqual([...cm.entries()], [...model.entries()], `round ${round}`);
    for (const k of ['k1', 'k77', 'k999', 'nope']) { assert.equal(cm.get(k), model.get(k)); assert.equal(cm.has(k), model.has(k)); }
    versions.push([cm, [...model.entries()]]);
  }
  for (const [v, entries] of versions) assert.deepEqual([...v], entries, 'an older version is unchanged');
});

test('an update keeps the key in place; a new key goes last', () => {
  const a = ChunkedMap.from<number>([['x', 1], ['y', 2], ['z', 3]]);
  const b = a.builder().set('y', 20).set('w', 4).build();
  assert.deepEqual([...b.keys()], ['x', 'y', 'z', 'w']);
  assert.equal(b.get('y'), 20);
  assert.equal(a.get('y'), 2);
});
