import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LoginLimiter } from '../../../runtime/auth/login-limiter.js';

test('LoginLimiter: 5 free failures, then exponential backoff per account and source', () => {
  let now = 1_000_000;
  const l = new LoginLimiter({ freeFailures: 5, baseDelayMs: 30_000, maxDelayMs: 120_000, forgetAfterMs: 3_600_000 }, () => now);
  for (let i = 0; i < 4; i++) l.fail('A@x.test', '10.0.0.1');
  assert.equal(l.retryAfterMs('a@x.test', '10.0.0.1'), 0, 'four failures are free');
  l.fail('a@x.test', '10.0.0.1');
  assert.equal(l.retryAfterMs('a@x.test', '10.0.0.1'), 30_000);
  assert.equal(l.retryAfterMs('a@x.test', '10.0.0.2'), 0, 'another source is not blocked');
  assert.equal(l.retryAfterMs('b@x.test', '10.0.0.1'), 0, 'another account is not blocked');
  now += 30_000;
  assert.equal(l.retryAfterMs('a@x.test', '10.0.0.1'), 0, 'allowed after the delay');
  l.fail('a@x.test', '10.0.0.1');
  assert.equal(l.retryAfterMs('a@x.test', '10.0.0.1'), 60_000, 'doubles');
  for (let i = 0; i < 5; i++) l.fail('a@x.test', '10.0.0.1');
  assert.equal(l.retryAfterMs('a@x.test', '10.0.0.1'), 120_000, 'capped');
  l.succeed('a@x.test', '10.0.0.1');
  assert.equal(l.retryAfterMs('a@x.test', '10.0.0.1'), 0, 'success clears');
  l.fail('c@x.test', 's'); for (let i = 0; i < 5; i++) l.fail('c@x.test', 's');
  now += 3_600_001;
  assert.equal(l.retryAfterMs('c@x.test', 's'), 0, 'forgotten after an hour');
});
