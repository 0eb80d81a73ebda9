import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveSecretRef, secretEnvPrefix, secretRefProblem, SecretRefError, type SecretPolicy, type SecretRef } from '../../../runtime/alerts/secret-ref.js';

const root = mkdtempSync(join(tmpdir(), 'gslbd-secrets-'));
const dir = join(root, 'secrets');
const outside = join(root, 'elsewhere');
mkdirSync(join(dir, 'acme'), { recursive: true });
mkdirSync(outside);
writeFileSync(join(dir, 'ops.key'), 'ops-secret\n');
writeFileSync(join(dir, 'acme', 'hook.key'), 'acme-secret');
writeFileSync(join(dir, 'empty.key'), '');
writeFileSync(join(outside, 'stolen.key'), 'not-yours');
symlinkSync(join(outside, 'stolen.key'), join(dir, 'acme', 'link.key'));
const policy: SecretPolicy = {
  env: { GSLB_ALERT_OPS_KEY: 'env-ops', GSLB_ALERT_ACME__KEY: 'env-acme', GSLB_ALERT_ACME_X__KEY: 'env-acme-x', GSLB_API_KEY: 'system' },
  dirs: [dir], operatorTenant: 'default',
};

test.after(() => rmSync(root, { recursive: true, force: true }));

test('secretEnvPrefix: the operator tenant uses GSLB_ALERT_, a tenant GSLB_ALERT_<TENANT>__', () => {
  assert.equal(secretEnvPrefix('default', 'default'), 'GSLB_ALERT_');
  assert.equal(secretEnvPrefix('acme-x', 'default'), 'GSLB_ALERT_ACME_X__');
});

test('secretRefProblem: names, tenants, folders, presence (table)', () => {
  const cases: { name: string; ref: SecretRef; tenant: string; present?: boolean; want: RegExp | undefined }[] = [
    { name: 'operator env', ref: { env: 'GSLB_ALERT_OPS_KEY' }, tenant: 'default', want: undefined },
    { name: 'daemon variable refused', ref: { env: 'GSLB_API_KEY' }, tenant: 'default', want: /not allowed: names start with GSLB_ALERT_/ },
    { name: 'operator env unset', ref: { env: 'GSLB_ALERT_NOPE' }, tenant: 'default', want: /not set on this node/ },
    { name: 'unset but not checked offline', ref: { env: 'GSLB_ALERT_NOPE' }, tenant: 'default', present: false, want: undefined },
    { name: 'tenant env', ref: { env: 'GSLB_ALERT_ACME__KEY' }, tenant: 'acme', want: undefined },
    { name: 'tenant may not use the operator\'s', ref: { env: 'GSLB_ALERT_OPS_KEY' }, tenant: 'acme', want: /GSLB_ALERT_ACME__/ },
    { name: 'acme may not reach acme-x\'s variable', ref: { env: 'GSLB_ALERT_ACME__X__KEY' }, tenant: 'acme', want: /not allowed/ },
    { name: 'acme-x\'s own', ref: { env: 'GSLB_ALERT_ACME_X__KEY' }, tenant: 'acme-x', want: undefined },
    { name: 'leading underscore after the prefix', ref: { env: 'GSLB_ALERT_ACME___KEY' }, tenant: 'acme', want: /not allowed/ },
    { name: 'operator file', ref: { file: join(dir, 'ops.key') }, tenant: 'default', want: undefined },
    { name: 'operator file in a tenant folder', ref: { file: join(dir, 'acme', 'hook.key') }, tenant: 'default', want: undefined },
    { name: 'tenant file', ref: { file: join(dir, 'acme', 'hook.key') }, tenant: 'acme', want: undefined },
    { name: 'tenant file outside its folder', ref: { file: join(dir, 'ops.key') }, tenant: 'acme', want: /outside the secret folders/ },
    { name: 'dot-dot escape', ref: { file: join(dir, 'acme', '..', 'ops.key') }, tenant: 'acme', want: /outside the secret folders/ },
    { name: 'symlink out of the folder', ref: { file: join(dir, 'acme', 'link.key') }, tenant: 'acme', want: /outside the secret folders/ },
    { name: 'missing file', ref: { file: join(dir, 'nope.key') }, tenant: 'default', want: /cannot be read on this node \(ENOENT\)/ },
    { name: 'a folder', ref: { file: join(dir, 'acme') }, tenant: 'default', want: /not a regular file/ },
    { name: 'relative', ref: { file: 'ops.key' }, tenant: 'default', want: /absolute/ },
  ];
  for (const c of cases) {
    const got = secretRefProblem(c.ref, c.tenant, policy, c.present ?? true);
    if (c.want === undefined) assert.equal(got, undefined, c.name);
    else assert.match(got ?? '', c.want, c.name);
  }
  assert.match(secretRefProblem({ file: join(dir, 'ops.key') }, 'default', { ...policy, dirs: [] }) ?? '', /alerts.secretDirs is empty/);
});

test('resolveSecretRef: reads at send time, drops one newline, never puts the value in an error', async () => {
  assert.equal(await resolveSecretRef({ env: 'GSLB_ALERT_OPS_KEY' }, 'default', policy), 'env-ops');
  assert.equal(await resolveSecretRef({ file: join(dir, 'ops.key') }, 'default', policy), 'ops-secret');
  assert.equal(await resolveSecretRef({ file: join(dir, 'acme', 'hook.key') }, 'acme', policy), 'acme-secret');
  for (const [ref, tenant] of [[{ file: join(dir, 'acme', 'link.key') }, 'acme'], [{ file: join(dir, 'empty.key') }, 'default'], [{ env: 'GSLB_API_KEY' }, 'default']] as [SecretRef, string][]) {
    await assert.rejects(resolveSecretRef(ref, tenant, policy), (err: Error) => err instanceof SecretRefError && !/not-yours|system/.test(err.message));
  }
});
