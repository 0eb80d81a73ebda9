import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderCanary } from '../../../cli/canary-format.js';
import type { CanaryStatus } from '../../../gitops/canary/port.js';

const base: CanaryStatus = {
  revision: '0123456789abcdef0123456789abcdef01234567', phase: 'baking', nodes: ['a', 'b'], bakeMs: 120_000, publishedAt: 0,
  until: null, decidedAt: null, reason: 'waiting for b to report the revision applied', previous: 'f'.repeat(40), verdicts: [],
};
const at = Date.UTC(2026, 0, 2, 3, 4, 5);

test('gslbctl status: the Canary line per phase', () => {
  const rows: { name: string; given: Partial<CanaryStatus>; want: string }[] = [
    { name: 'waiting for a report', given: {}, want: 'Canary:         0123456789ab on a, b: baking (waiting for b to report the revision applied)' },
    { name: 'baking', given: { until: at, reason: 'every canary node applied it; no breach so far' }, want: 'Canary:         0123456789ab on a, b: baking until 2026-01-02 03:04:05Z (every canary node applied it; no breach so far)' },
    { name: 'promoted', given: { phase: 'promoted', decidedAt: at, reason: null }, want: 'Canary:         0123456789ab on a, b: promoted at 2026-01-02 03:04:05Z' },
    { name: 'aborted', given: { phase: 'aborted', decidedAt: at, reason: 'node a: healthy members 0/1 (0%) below minHealthyShare 50%' }, want: 'Canary:         0123456789ab on a, b: aborted at 2026-01-02 03:04:05Z: node a: healthy members 0/1 (0%) below minHealthyShare 50%' },
  ];
  for (const r of rows) assert.equal(renderCanary({ ...base, ...r.given }), r.want, r.name);
});
