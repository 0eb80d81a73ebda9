import { test } from 'node:test';
import assert from 'node:assert/strict';
import { domainAllowed, readClaim, resolveRole } from '../../../runtime/auth/role-claim.js';

test('resolveRole: claim value → roleMapping → defaultRole', () => {
  const mapping = { admins: 'tenant_admin', ops: 'operator', bogus: 'superuser' };
  const rows: { name: string; claims: Record<string, unknown>; roleClaim: string; want: string }[] = [
    { name: 'empty roleClaim gives default', claims: { groups: ['admins'] }, roleClaim: '', want: 'viewer' },
    { name: 'string claim', claims: { group: 'ops' }, roleClaim: 'group', want: 'operator' },
    { name: 'list: first mapped value wins', claims: { groups: ['x', 'ops', 'admins'] }, roleClaim: 'groups', want: 'operator' },
    { name: 'dotted path', claims: { realm: { roles: ['admins'] } }, roleClaim: 'realm.roles', want: 'tenant_admin' },
    { name: 'no mapping matches', claims: { groups: ['x'] }, roleClaim: 'groups', want: 'viewer' },
    { name: 'mapping to an unknown role is ignored', claims: { groups: ['bogus', 'ops'] }, roleClaim: 'groups', want: 'operator' },
    { name: 'missing claim', claims: {}, roleClaim: 'a.b.c', want: 'viewer' },
    { name: 'path through a non-object', claims: { a: 'str' }, roleClaim: 'a.b', want: 'viewer' },
  ];
  for (const r of rows) assert.equal(resolveRole(r.claims, r.roleClaim, mapping, 'viewer'), r.want, r.name);
});

test('readClaim reads nested values', () => {
  assert.deepEqual(readClaim({ a: { b: { c: [1] } } }, 'a.b.c'), [1]);
  assert.equal(readClaim({ a: [{ b: 1 }] }, 'a.b'), undefined);
});

test('domainAllowed: exact domain, case-insensitive, empty list allows all', () => {
  const rows: [string, string[], boolean][] = [
    ['a@corp.test', [], true],
    ['a@corp.test', ['corp.test'], true],
    ['a@CORP.test', ['corp.TEST'], true],
    ['a@evil-corp.test', ['corp.test'], false],
    ['a@sub.corp.test', ['corp.test'], false],
    ['a@corp.test.evil', ['corp.test'], false],
    ['no-at-sign', ['corp.test'], false],
  ];
  for (const [email, allowed, want] of rows) assert.equal(domainAllowed(email, allowed), want, `${email} in ${allowed.join(',')}`);
});
