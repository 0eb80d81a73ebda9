import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyRateLimiter } from '../../../runtime/forms/public/rate-limit.js';
import { requireFormAccess, requireScope } from '../../../runtime/forms/public/access.js';
import { paginate, parsePage } from '../../../runtime/forms/public/list.js';
import { PUBLIC_ERROR_NAMES, publicStatus } from '../../../runtime/forms/public/errors.js';
import type { FormCaller } from '../../../runtime/forms/keys/types.js';

test('rate limit: perMinute requests per key per window, then the seconds left; keys counted apart; a new window starts fresh', () => {
  let now = 1_000_000;
  const limiter = new KeyRateLimiter(3, () => now);
  assert.deepEqual([limiter.hit('a'), limiter.hit('a'), limiter.hit('a')], [0, 0, 0]);
  assert.equal(limiter.hit('b'), 0, 'another key has its own count');
  now += 15_500;
  assert.equal(limiter.hit('a'), 45, 'retry when the window ends: 44.5 s, rounded up');
  assert.equal(limiter.hit('a'), 45, 'a refused request is not counted');
  now += 44_499;
  assert.equal(limiter.hit('a'), 1, 'never less than one second');
  now += 1;
  assert.equal(limiter.hit('a'), 0, 'the next window');
});

const caller = (over: Partial<FormCaller> = {}): FormCaller => ({ keyId: 'k1', keyName: 'site', tenantId: 't1', scopes: ['forms:read'], formId: null, ...over });

test('scope: a key without the route scope gets 403 naming the scope', () => {
  assert.doesNotThrow(() => requireScope(caller(), 'forms:read'));
  assert.throws(() => requireScope(caller(), 'forms:write'), { status: 403, message: 'API key "site" lacks the scope forms:write' });
});

test('single-form keys: their form only (path and body), never a new form; other keys everywhere', () => {
  const one = caller({ formId: 'f1' });
  assert.doesNotThrow(() => requireFormAccess(one, 'path', ['f1', 'f1']));
  assert.doesNotThrow(() => requireFormAccess(one, 'path', ['f1', undefined]));
  assert.doesNotThrow(() => requireFormAccess(one, undefined, []), 'routes that reach no form (plan, action types)');
  assert.throws(() => requireFormAccess(one, 'path', ['f2', undefined]), { status: 403, message: 'API key "site" is restricted to form f1' });
  assert.throws(() => requireFormAccess(one, 'path', ['f1', 'f2']), { status: 403 }, 'a body naming another form');
  assert.throws(() => requireFormAccess(one, 'new', []), { status: 403, message: 'API key "site" is restricted to form f1 and cannot create forms' });
  assert.doesNotThrow(() => requireFormAccess(caller(), 'path', ['f2', 'f3']));
  assert.doesNotThrow(() => requireFormAccess(caller(), 'new', []));
});

test('pages: defaults 1 and 20, limit at most 100, numbers only; a page past the end is empty', () => {
  assert.deepEqual(parsePage({}), { page: 1, limit: 20 });
  assert.deepEqual(parsePage({ page: '3', limit: '100' }), { page: 3, limit: 100 });
  for (const [q, msg] of [[{ page: '0' }, /^page:/], [{ page: '-1' }, /^page:/], [{ page: '1.5' }, /^page:/], [{ limit: '101' }, /^limit: must be a whole number from 1 to 100/], [{ limit: '0' }, /^limit:/], [{ limit: 'x' }, /^limit:/]] as const) {
    assert.throws(() => parsePage(q), { status: 400, message: msg }, JSON.stringify(q));
  }
  const items = [1, 2, 3, 4, 5];
  assert.deepEqual(paginate(items, { page: 2, limit: 2 }), { data: [3, 4], page: 2, limit: 2, total: 5 });
  assert.deepEqual(paginate(items, { page: 4, limit: 2 }), { data: [], page: 4, limit: 2, total: 5 });
});

test('error names by status (docs/forms.md); other 4xx are validation errors, other 5xx internal', () => {
  assert.deepEqual(Object.entries(PUBLIC_ERROR_NAMES).map(([s, n]) => `${s} ${n}`), [
    '400 validation_error', '401 unauthorized', '403 forbidden', '404 not_found', '405 method_not_allowed', '409 conflict', '413 payload_too_large',
    '415 unsupported_media_type', '422 schema_mismatch', '429 rate_limited', '500 internal_error',
  ]);
  assert.deepEqual([publicStatus(404), publicStatus(405), publicStatus(418), publicStatus(503)], [404, 405, 400, 500]);
});
