import { test } from 'node:test';
import assert from 'node:assert/strict';
import { originAllowed, pageOrigin } from '../../../runtime/forms/intake/origin.js';
import { jsonFields, urlEncodedFields } from '../../../runtime/forms/intake/fields.js';
import { schemaMismatches } from '../../../runtime/forms/intake/schema-check.js';
import { nextUrl } from '../../../runtime/forms/intake/pages.js';
import { conditionHolds, conditionsMatch, type Condition } from '../../../runtime/forms/forms/conditions.js';
import { submissionQuery } from '../../../runtime/forms/submissions/service.js';
import { attachmentHeader } from '../../../runtime/forms/submissions/views.js';
import { GslbError } from '../../../runtime/errors.js';

test('pageOrigin: Origin first, then Referer; opaque and non-web origins are skipped', () => {
  assert.equal(pageOrigin('https://a.example:8443', 'https://b.example/x'), 'https://a.example:8443');
  assert.equal(pageOrigin(undefined, 'https://b.example/x?y=1'), 'https://b.example');
  assert.equal(pageOrigin('null', 'http://b.example/'), 'http://b.example');
  assert.equal(pageOrigin('file://', 'not a url'), null);
  assert.equal(pageOrigin(undefined, undefined), null);
});

const ORIGINS: [string[], string | null, boolean][] = [
  [[], null, true],
  [[], 'https://any.example', true],
  [['example.com'], 'https://example.com', true],
  [['example.com'], 'http://example.com:8080', true],
  [['example.com'], 'https://www.example.com', false],
  [['Example.COM.'], 'https://example.com', true],
  [['*.example.com'], 'https://www.example.com', true],
  [['*.example.com'], 'https://example.com', false],
  [['*.example.com'], 'https://badexample.com', false],
  [['https://example.com'], 'https://example.com', true],
  [['https://example.com'], 'http://example.com', false],
  [['https://example.com:8443/path'], 'https://example.com:8443', true],
  [['127.0.0.1'], 'http://127.0.0.1:3000', true],
  [['::1'], 'http://[::1]:3000', true],
  [['example.com'], null, false],
];
for (const [allowed, origin, want] of ORIGINS) {
  test(`originAllowed(${JSON.stringify(allowed)}, ${origin}) = ${want}`, () => assert.equal(originAllowed(allowed, origin), want));
}

test('url-encoded fields: repeated names gather in a list, [] suffixes drop, empty names skip; limits are 400 and 413', () => {
  assert.deepEqual(urlEncodedFields('a=1&b=2&a=3&c[]=x&=skip&d=', 10), { a: ['1', '3'], b: '2', c: 'x', d: '' });
  assert.throws(() => urlEncodedFields('a=1&b=2&c=3', 2), (e: GslbError) => e.status === 413 && /at most 2/.test(e.message));
  assert.throws(() => urlEncodedFields(`${'n'.repeat(201)}=1`, 2), (e: GslbError) => e.status === 400);
});

test('JSON fields: scalars as text, lists of scalars, objects refused', () => {
  assert.deepEqual(jsonFields({ a: 1, b: true, c: null, d: ['x', 2], e: 's' }, 20), { a: '1', b: 'true', c: '', d: ['x', '2'], e: 's' });
  for (const bad of [[1], 'x', null, { a: { b: 1 } }, { a: [{}] }]) assert.throws(() => jsonFields(bad, 20), (e: GslbError) => e.status === 400);
});

test('schema check: required (files too), types, maxLength in characters, options; unknown fields allowed', () => {
  const schema = {
    enforce: true,
    fields: [
      { name: 'email', type: 'email', required: true },
      { name: 'site', type: 'url', required: false },
      { name: 'when', type: 'date', required: false },
      { name: 'name', type: 'text', required: false, maxLength: 3 },
      { name: 'cv', type: 'file', required: true },
    ],
  };
  assert.deepEqual(schemaMismatches(schema, { email: 'a@b.co', site: 'https://x.example', when: '2026-11-24', name: 'Zoë', other: 'ok' }, new Set(['cv'])), []);
  assert.deepEqual(schemaMismatches(schema, { email: '  ', site: 'x.example', when: '2026-13-45', name: 'Anna' }, new Set()), [
    { field: 'email', message: 'is required' },
    { field: 'site', message: 'must be an http or https URL' },
    { field: 'when', message: 'must be a date (YYYY-MM-DD)' },
    { field: 'name', message: 'must be at most 3 characters' },
    { field: 'cv', message: 'is required' },
  ]);
});

const OPS: [Condition, string[], boolean][] = [
  [{ field: 'f', op: 'equals', value: 'Yes' }, [' Yes '], true],
  [{ field: 'f', op: 'equals', value: 'Yes' }, ['yes'], false],
  [{ field: 'f', op: 'not_equals', value: 'a' }, ['b', 'c'], true],
  [{ field: 'f', op: 'not_equals', value: 'a' }, ['b', 'a'], false],
  [{ field: 'f', op: 'contains', value: 'URGENT' }, ['this is urgent'], true],
  [{ field: 'f', op: 'not_contains', value: 'spam' }, ['ham'], true],
  [{ field: 'f', op: 'not_contains', value: 'spam' }, ['SPAM!'], false],
  [{ field: 'f', op: 'starts_with', value: 'Re:' }, ['re: hello'], true],
  [{ field: 'f', op: 'starts_with', value: 'Re:' }, ['hello re:'], false],
  [{ field: 'f', op: 'empty' }, [], true],
  [{ field: 'f', op: 'empty' }, ['  '], true],
  [{ field: 'f', op: 'empty' }, ['x'], false],
  [{ field: 'f', op: 'not_empty' }, ['x'], true],
  [{ field: 'f', op: 'not_empty' }, [], false],
  [{ field: 'f', op: 'gt', value: '10' }, ['10.5'], true],
  [{ field: 'f', op: 'gt', value: '10' }, ['10'], false],
  [{ field: 'f', op: 'gt', value: '10' }, ['abc'], false],
  [{ field: 'f', op: 'lt', value: '10' }, ['9'], true],
  [{ field: 'f', op: 'lt', value: '10' }, [''], false],
];
for (const [c, values, want] of OPS) {
  test(`condition ${c.op} ${c.value ?? ''} on ${JSON.stringify(values)} = ${want}`, () => assert.equal(conditionHolds(c, values), want));
}

test('conditions combine with all (default) or any; no conditions always match', () => {
  const conds: Condition[] = [{ field: 'a', op: 'equals', value: '1' }, { field: 'b', op: 'not_empty' }];
  const values = (f: Record<string, string[]>) => (name: string) => f[name] ?? [];
  assert.equal(conditionsMatch([], 'all', values({})), true);
  assert.equal(conditionsMatch(conds, 'all', values({ a: ['1'] })), false);
  assert.equal(conditionsMatch(conds, 'any', values({ a: ['1'] })), true);
  assert.equal(conditionsMatch(conds, 'all', values({ a: ['1'], b: ['x'] })), true);
  assert.equal(conditionsMatch(conds, 'any', values({})), false);
});

test('nextUrl: the built-in page, a path on the posting site (or this server), an absolute URL', () => {
  assert.equal(nextUrl('', 'f1', 'https://shop.example', 'http://gslb:8080'), 'http://gslb:8080/f/f1/thanks');
  assert.equal(nextUrl('/thanks?x=1', 'f1', 'https://shop.example', 'http://gslb:8080'), 'https://shop.example/thanks?x=1');
  assert.equal(nextUrl('/thanks', 'f1', null, 'http://gslb:8080'), 'http://gslb:8080/thanks');
  assert.equal(nextUrl('https://example.org/done', 'f1', 'https://shop.example', 'http://gslb:8080'), 'https://example.org/done');
});

test('submission list query: defaults, getSpam values, filters; bad values are 400 naming the parameter', () => {
  const page = { page: 1, limit: 20 };
  assert.deepEqual(submissionQuery(page, {}), { page: 1, limit: 20, sort: 'created_at', order: 'desc', spam: false });
  for (const v of ['', 'true', '1']) assert.equal(submissionQuery(page, { getSpam: v }).spam, true, v);
  for (const v of ['false', '0']) assert.equal(submissionQuery(page, { getSpam: v }).spam, false, v);
  assert.deepEqual(submissionQuery(page, { claimed: 'false', since: '2026-11-01', until: '2026-11-24T10:00:00Z', sort: 'id', order: 'asc' }), {
    page: 1, limit: 20, sort: 'id', order: 'asc', spam: false, claimed: false, since: Date.parse('2026-11-01'), until: Date.parse('2026-11-24T10:00:00Z'),
  });
  assert.throws(() => submissionQuery(page, { since: 'yesterday' }), /^GslbError: since: must be an ISO 8601/);
  assert.throws(() => submissionQuery(page, { sort: 'name' }), /sort: must be one of created_at, id/);
});

test('the download header of a stored file is an attachment with a safe quoted name', () => {
  assert.equal(attachmentHeader('a "b".txt'), 'attachment; filename="a _b_.txt"; filename*=UTF-8\'\'a%20%22b%22.txt');
  assert.equal(attachmentHeader('Zoë.pdf'), 'attachment; filename="Zo_.pdf"; filename*=UTF-8\'\'Zo%C3%AB.pdf');
});
