import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadSchema } from '../../../runtime/paths.js';
import { PERMISSIONS, ROLES } from '../../../runtime/ports/permissions.js';
import { publicUser, type UserRecord } from '../../../runtime/auth/user-store.js';
import { viewOf } from '../../../runtime/mail/settings.js';

type Def = { enum?: unknown[]; required?: string[]; properties?: Record<string, { enum?: unknown[] }> };
const defsOf = (file: string) => loadSchema<{ $defs: Record<string, Def> }>(file).$defs;

const user: UserRecord = {
  kind: 'user', id: 'u1', tenantId: 'default', origin: 'api', revision: '', email: 'a@example.test', displayName: 'A', role: 'viewer',
  passwordHash: 'hash', authProvider: 'password', totpSecret: 'sealed', totpPending: 'sealed', totpLastStep: 0, createdAt: 1_000, updatedAt: 2_000,
};

// The API schema repeats lists the code owns; a change to one must reach the other.
const rows: { name: string; given: () => unknown; want: unknown }[] = [
  { name: 'Role lists every role', given: () => defsOf('api-auth.v1.schema.json').Role!.enum, want: [...ROLES] },
  { name: 'Me.role lists every role and null', given: () => defsOf('api-auth.v1.schema.json').Me!.properties!.role!.enum, want: [...ROLES, null] },
  { name: 'Permission lists every permission', given: () => defsOf('api-auth.v1.schema.json').Permission!.enum, want: [...PERMISSIONS] },
  { name: 'User requires exactly what publicUser returns', given: () => [...defsOf('api-auth.v1.schema.json').User!.required!].sort(), want: Object.keys(publicUser(user)).sort() },
  { name: 'User declares exactly what publicUser returns', given: () => Object.keys(defsOf('api-auth.v1.schema.json').User!.properties!).sort(), want: Object.keys(publicUser(user)).sort() },
  { name: 'MailSettings declares exactly the view', given: () => Object.keys(defsOf('api-mail.v1.schema.json').MailSettings!.properties!).sort(), want: Object.keys(viewOf(undefined, 'none')).sort() },
];

for (const r of rows) test(`API schema: ${r.name}`, () => assert.deepEqual(r.given(), r.want));

test('API schema: no response definition names a secret field', () => {
  const secret = /hash|totpSecret|totpPending|^password$/i;
  const responses = { 'api-auth.v1.schema.json': ['User', 'Me', 'Session', 'Tenant', 'ApiKey', 'NewApiKey'], 'api-mail.v1.schema.json': ['MailSettings', 'MailTestResult'] };
  for (const [file, names] of Object.entries(responses)) {
    const defs = defsOf(file);
    for (const n of names) for (const f of Object.keys(defs[n]!.properties!)) assert.doesNotMatch(f, secret, `${file} ${n}.${f}`);
  }
});
