import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OVERSHOOT, slackFor } from '../../../runtime/cluster/shared-limits.js';

test('the local slack keeps N nodes within 20 % above the limit (docs/cluster.md "Shared limits")', () => {
  assert.equal(slackFor(30, 3), 1);
  assert.equal(slackFor(60, 3), 3);
  assert.equal(slackFor(10, 3), 0, 'a small limit: every admission waits for its write');
  assert.equal(slackFor(5, 1), 0);
  assert.equal(slackFor(1000, 0), 100, 'no live peer known: this node alone');
  for (let size = 1; size <= 2000; size += 7) {
    for (let nodes = 1; nodes <= 16; nodes++) {
      const worst = size + (nodes + 1) * slackFor(size, nodes);
      assert.ok(worst <= size * (1 + OVERSHOOT), `size ${size}, ${nodes} nodes: ${worst}`);
    }
  }
});
