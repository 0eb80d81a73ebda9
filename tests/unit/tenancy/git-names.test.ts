import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateConfigObject } from '../../../runtime/config/load.js';
import { emptySnapshot, nextSnapshot } from '../../../core/snapshot/snapshot.js';
import type { ServiceRow } from '../../../core/model/types.js';
import { loadManifests } from '../../../gitops/load/index.js';
import { checkAgainstActual, validateManifests } from '../../../gitops/validate/validate.js';
import '../../../runtime/kinds-all.js';
import { validationEnv } from '../../../gitops/validate/names.js';

// Git rows belong to the default tenant: a Service whose domain is delegated to another tenant is a
// validation problem at its file and line, and (first come) so is a name at, under or above another
// tenant's REST service. Tenant roles read GitOps status: no other tenant is named.

const env = validationEnv(validateConfigObject({
  dns: { domain: 'example.test' },
  tenancy: { delegations: [{ suffix: 'acme.example.test', tenant: 'acme' }, { suffix: 'ops.example.test', tenant: 'default' }] },
}));
const svc = (name: string, domain: string) => `apiVersion: gslb/v1\nkind: Service\nmetadata:\n  name: ${name}\nspec:\n  domain: ${domain}\n`;

function validate(domain: string) {
  const l = loadManifests([{ path: 'services/x.yaml', text: `# a comment\n${svc('x', domain)}` }]);
  return validateManifests(l.manifests, env);
}

test('a git Service in another tenant\'s delegation is a problem at file:line (table)', () => {
  const rows: { name: string; domain: string; want: boolean }[] = [
    { name: 'delegated to another tenant', domain: 'www.acme.example.test.', want: true },
    { name: 'the delegated suffix itself', domain: 'acme.example.test.', want: true },
    { name: 'delegated to the default tenant', domain: 'www.ops.example.test.', want: false },
    { name: 'undelegated', domain: 'www.example.test.', want: false },
    { name: 'reserved: git is supra-tenant', domain: 'example.test.', want: false },
  ];
  for (const r of rows) {
    const { problems } = validate(r.domain);
    if (!r.want) { assert.deepEqual(problems, [], r.name); continue; }
    assert.equal(problems.length, 1, `${r.name}: ${JSON.stringify(problems)}`);
    assert.match(problems[0]!, /^services\/x\.yaml:7(:\d+)?: spec\.domain = /, r.name);
    assert.match(problems[0]!, /under acme\.example\.test\., delegated to another tenant/, r.name);
    assert.ok(!problems[0]!.includes('"acme"'), r.name);
  }
  assert.deepEqual(validateManifests(loadManifests([{ path: 'x.yaml', text: svc('x', 'www.acme.example.test.') }]).manifests, {}).problems, [], 'offline (rules unknown): not checked');
});

test('a git Service, Redirect or TxtRecord at a public suffix (or a wildcard at one) is a problem at file:line, with or without the config', () => {
  const redirect = (host: string) => `apiVersion: gslb/v1\nkind: Redirect\nmetadata:\n  name: r\nspec:\n  host: "${host}"\n  target: https://www.example.org\n`;
  const txt = (name: string) => `apiVersion: gslb/v1\nkind: TxtRecord\nmetadata:\n  name: t\nspec:\n  name: ${name}\n  values: [v]\n`;
  const rows: { name: string; text: string; want: RegExp | undefined }[] = [
    { name: 'service at a TLD', text: svc('x', 'org.'), want: /^x\.yaml:6(:\d+)?: spec\.domain = .*org\. is a public suffix \(org\)/ },
    { name: 'service at a public suffix', text: svc('x', 'co.uk.'), want: /co\.uk\. is a public suffix \(co\.uk\)/ },
    { name: 'wildcard redirect at a TLD', text: redirect('*.com'), want: /^x\.yaml:6(:\d+)?: spec\.host = .*\*\.com\. covers every name under the public suffix com/ },
    { name: 'wildcard redirect at a public suffix', text: redirect('*.co.uk'), want: /covers every name under the public suffix co\.uk/ },
    { name: 'TXT record at a TLD', text: txt('test.'), want: /test\. is a public suffix \(test\)/ },
    { name: 'service under a suffix', text: svc('x', 'www.bshop.com.'), want: undefined },
    { name: 'wildcard redirect under a suffix', text: redirect('*.bshop.com'), want: undefined },
  ];
  for (const r of rows) {
    for (const [where, e] of [['with the config', env], ['offline', {}]] as const) {
      const { problems } = validateManifests(loadManifests([{ path: 'x.yaml', text: r.text }]).manifests, e);
      if (!r.want) { assert.deepEqual(problems, [], `${r.name}, ${where}`); continue; }
      assert.equal(problems.length, 1, `${r.name}, ${where}: ${JSON.stringify(problems)}`);
      assert.match(problems[0]!, r.want, `${r.name}, ${where}`);
    }
  }
});

test('git services against other tenants\' REST services: same name, under, above (table)', () => {
  const row = (id: string, domain: string, tenantId: string): ServiceRow => ({
    kind: 'service', id, name: `secret-${id}`, domain, algorithm: 'round-robin', ttl: 60, poolId: null, chain: [], whenAllUnhealthy: 'all', asnRules: [],
    origin: 'api', revision: 'api:1', tenantId,
  });
  const actual = nextSnapshot(emptySnapshot(), [row('t1', 'www.t.example.', 'beta'), row('d1', 'api.example.test.', 'default'), row('a1', 'x.acme.example.test.', 'beta')]
    .map((r) => ({ op: 'put' as const, row: r })), 'r', 0);
  const rows: { name: string; domain: string; want: string | undefined }[] = [
    { name: 'same name as a tenant service', domain: 'www.t.example.', want: 'domain www.t.example. is not available: a service of another tenant uses it' },
    { name: 'under a tenant service', domain: 'x.www.t.example.', want: 'domain x.www.t.example. is not available: a service of another tenant is at, under or above it' },
    { name: 'above a tenant service', domain: 't.example.', want: 'domain t.example. is not available: a service of another tenant is at, under or above it' },
    { name: 'same name as a default-tenant REST service names it', domain: 'api.example.test.', want: 'domain api.example.test. is already served by service "secret-d1" created over the REST API; delete it there first' },
    { name: 'sibling', domain: 'www2.t.example.', want: undefined },
    { name: 'under a REST service of the default tenant', domain: 'x.api.example.test.', want: undefined },
  ];
  for (const r of rows) {
    const desired = [{ kind: 'service', key: 'x', source: 'services/x.yaml', fields: { domain: r.domain }, refs: [] }];
    const out = checkAgainstActual(desired as never, actual, env);
    assert.deepEqual(out, r.want ? [`services/x.yaml: Service "x": ${r.want}`] : [], r.name);
    for (const p of out) if (!r.name.includes('default-tenant')) assert.ok(!p.includes('secret-') && !p.includes('beta'), p);
  }
});
