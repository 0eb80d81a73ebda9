import { test } from 'node:test';
import assert from 'node:assert/strict';
import { recordFailure, recordSuccess, type GitOpsStatus } from '../../../gitops/status.js';
import { renderFailingSince } from '../../../cli/gitops-commands.js';
import { duration } from '../../../cli/format.js';

const fresh = () => ({ ready: false, failures: 0, failingSince: null, lastError: null, lastAttemptAt: null } as unknown as GitOpsStatus);

test('every failed attempt advances failures, lastAttemptAt and lastError; failingSince keeps the start; success ends the run', () => {
  const s = fresh();
  recordFailure(s, 1000, { reason: 'FetchFailed', errorClass: 'transient', message: 'down' });
  recordFailure(s, 5000, { reason: 'SignatureMissing', errorClass: 'stalled', message: 'unsigned' });
  assert.deepEqual([s.failures, s.failingSince, s.lastAttemptAt], [2, 1000, 5000]);
  assert.deepEqual(s.lastError, { at: 5000, reason: 'SignatureMissing', errorClass: 'stalled', message: 'unsigned' });
  recordFailure(s, 6000, { reason: 'NotLeader', errorClass: 'waiting', message: 'lease' });
  assert.deepEqual([s.failures, s.lastAttemptAt, s.lastError?.at], [2, 6000, 5000], 'waiting is not a failure');
  recordSuccess(s, 9000);
  assert.deepEqual([s.failures, s.failingSince, s.lastAttemptAt, s.lastError?.reason], [0, null, 9000, 'SignatureMissing']);
});

test('durations and the "Stalled for" line (table)', () => {
  const rows: [number, string][] = [[0, '0s'], [-5000, '0s'], [59_999, '59s'], [192_000, '3m12s'], [3_900_000, '1h05m'], [90_000_000, '1d01h']];
  for (const [ms, want] of rows) assert.equal(duration(ms), want, String(ms));
  const at = Date.parse('2026-05-01T10:00:00Z');
  assert.equal(renderFailingSince({ ready: false, errorClass: 'stalled', failingSince: at }, at + 192_000), 'Stalled for 3m12s since 2026-05-01 10:00:00Z');
  assert.equal(renderFailingSince({ ready: false, errorClass: 'transient', failingSince: at }, at + 5_000), 'Failing for 5s since 2026-05-01 10:00:00Z');
  assert.equal(renderFailingSince({ ready: true, errorClass: null, failingSince: null }, at), undefined);
});
