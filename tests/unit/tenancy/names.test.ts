import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateConfigObject } from '../../../runtime/config/load.js';
import { checkNameClaim, nameOwner, nameRules, reservedNames, unservedReason, type NameClaim, type NamedService } from '../../../runtime/tenancy/names.js';

const cfg = validateConfigObject({
  dns: { domain: 'Example.Test', nsNames: ['ns1.example.test', 'ns2.elsewhere.test.'], soa: { mname: 'primary.example.test' } },
  tenancy: {
    delegations: [
      { suffix: 'acme.example.test', tenant: 'acme' },
      { suffix: 'shop.acme.example.test.', tenant: 'beta' },
      { suffix: 'beta.test', tenant: 'beta' },
      { suffix: 'shop.corp.test', tenant: 'acme' },
    ],
  },
});
// A suffix listed twice is refused by the config check; the rules themselves keep the first.
const rules = nameRules({ ...cfg, tenancy: { ...cfg.tenancy, delegations: [...cfg.tenancy.delegations, { suffix: 'BETA.test', tenant: 'acme' }] } });
const strict = nameRules(validateConfigObject({ tenancy: { requireDelegation: true, operatorTenant: 'ops', delegations: [{ suffix: 'acme.test', tenant: 'acme' }] } }));

test('the owner of a name is the tenant of its longest delegated suffix (table)', () => {
  const rows: { name: string; want: string | undefined }[] = [
    { name: 'acme.example.test.', want: 'acme' },
    { name: 'www.acme.example.test.', want: 'acme' },
    { name: 'WWW.ACME.example.test', want: 'acme' },
    { name: 'shop.acme.example.test.', want: 'beta' },
    { name: 'a.shop.acme.example.test.', want: 'beta' },
    { name: 'xacme.example.test.', want: undefined },
    { name: 'example.test.', want: undefined },
    { name: 'beta.test.', want: 'beta' },
    { name: 'other.test.', want: undefined },
  ];
  for (const r of rows) assert.equal(nameOwner(rules, r.name), r.want, r.name);
  assert.equal(nameOwner(nameRules(validateConfigObject({})), 'www.acme.example.test.'), undefined, 'no delegations: nobody owns anything');
});

test('reserved names: apex, name servers, SOA mname; defaults follow the zone', () => {
  assert.deepEqual([...rules.reserved].sort(), ['example.test.', 'ns1.example.test.', 'ns2.elsewhere.test.', 'primary.example.test.']);
  assert.deepEqual([...reservedNames(validateConfigObject({ dns: { domain: 'z.test.' } }).dns)].sort(), ['ns1.z.test.', 'z.test.']);
  assert.deepEqual([...reservedNames(validateConfigObject({}).dns)], [], 'no dns.domain: nothing is reserved by default');
});

const svc = (id: string, domain: string, tenantId: string, origin = 'api'): NamedService => ({ id, name: `svc-${id}`, domain, tenantId, origin });
const existing = [
  svc('a1', 'www.a.example.', 'a'),
  svc('d1', 'git.example.test.', 'default', 'git'),
  svc('b1', 'shop.acme.example.test.', 'acme'),
  svc('apex', 'example.test.', 'default'),
];

test('checkNameClaim: reserved, delegated, first come, own tenant (table)', () => {
  const tenantB = (name: string, selfId?: string): NameClaim => ({ name, tenant: 'b', principalTenant: 'b', selfId });
  const tenantA = (name: string): NameClaim => ({ name, tenant: 'a', principalTenant: 'a' });
  const acme = (name: string): NameClaim => ({ name, tenant: 'acme', principalTenant: 'acme' });
  const system = (name: string): NameClaim => ({ name, tenant: 'default', principalTenant: null });
  const rows: { name: string; given: NameClaim; r?: typeof rules; want: [number, string] | 'ok' }[] = [
    { name: 'free name', given: tenantB('free.example.'), want: 'ok' },
    { name: 'apex to a tenant', given: tenantB('example.test.'), want: [403, 'name example.test. is reserved'] },
    { name: 'apex without dot, any case', given: tenantB('EXAMPLE.test'), want: [403, 'name example.test. is reserved'] },
    { name: 'name server to a tenant', given: tenantB('ns2.elsewhere.test.'), want: [403, 'name ns2.elsewhere.test. is reserved'] },
    { name: 'SOA mname to a tenant', given: tenantB('primary.example.test.'), want: [403, 'name primary.example.test. is reserved'] },
    { name: 'apex to the system key, above tenant services', given: { ...system('example.test.'), selfId: 'apex' }, want: 'ok' },
    { name: 'under a service on the apex', given: tenantB('y.example.test.'), want: 'ok' },
    { name: 'another tenant\'s delegation', given: tenantB('www.acme.example.test.'), want: [403, 'name www.acme.example.test. is not delegated to your tenant'] },
    { name: 'own delegation', given: acme('www.acme.example.test.'), want: 'ok' },
    { name: 'longer suffix of another tenant inside own delegation', given: acme('x.shop.acme.example.test.'), want: [403, 'name x.shop.acme.example.test. is not delegated to your tenant'] },
    { name: 'system key in a tenant delegation is told which tenant', given: system('www.acme.example.test.'), want: [403, 'name www.acme.example.test. is delegated to tenant "acme" (suffix acme.example.test.)'] },
    { name: 'same name as another tenant', given: tenantB('www.a.example.'), want: [409, 'domain www.a.example. is not available'] },
    { name: 'same name, no trailing dot, other case', given: tenantB('WWW.A.example'), want: [409, 'domain www.a.example. is not available'] },
    { name: 'under another tenant\'s service', given: tenantB('x.www.a.example.'), want: [409, 'domain x.www.a.example. is not available'] },
    { name: 'above another tenant\'s service', given: tenantB('a.example.'), want: [409, 'domain a.example. is not available'] },
    { name: 'under a git service', given: tenantB('x.git.example.test.'), want: [409, 'domain x.git.example.test. is not available'] },
    { name: 'sibling of another tenant\'s service', given: tenantB('www2.a.example.'), want: 'ok' },
    { name: 'label boundary: not under', given: tenantB('xwww.a.example.'), want: 'ok' },
    { name: 'own tenant, same name: names the service', given: tenantA('www.a.example.'), want: [409, 'domain www.a.example. is already served by service "svc-a1" (a1)'] },
    { name: 'own tenant, under own service', given: tenantA('x.www.a.example.'), want: 'ok' },
    { name: 'rename to itself', given: { name: 'www.a.example.', tenant: 'a', principalTenant: 'a', selfId: 'a1' }, want: 'ok' },
    { name: 'system key over a tenant service names it', given: system('x.www.a.example.'), want: [409, 'domain x.www.a.example. is not available: service "svc-a1" (a1) of tenant "a" is at, under or above it'] },
    { name: 'delegated name: owner wins over an older foreign row above it', given: { name: 'x.acme.example.test.', tenant: 'acme', principalTenant: 'acme' }, r: nameRules(validateConfigObject({ tenancy: { delegations: [{ suffix: 'acme.example.test', tenant: 'acme' }] } })), want: 'ok' },
    { name: 'above another tenant\'s delegated suffix', given: tenantB('corp.test.'), want: [409, 'domain corp.test. is not available'] },
    { name: 'a top-level domain, above every delegation', given: tenantB('test.'), want: [400, 'name test. is a public suffix (test); use a name under it'] },
    { name: 'a public suffix, to the system key too', given: system('co.uk.'), want: [400, 'name co.uk. is a public suffix (co.uk); use a name under it'] },
    { name: 'a wildcard base at a public suffix', given: { ...tenantB('com.'), wildcard: true }, want: [400, 'name *.com. covers every name under the public suffix com'] },
    { name: 'a wildcard under a registrable name', given: { ...tenantB('bshop.com.'), wildcard: true }, want: 'ok' },
    { name: 'requireDelegation: tenant outside its delegations', given: tenantB('free.example.'), r: strict, want: [403, 'name free.example. is not under a suffix delegated to your tenant'] },
    { name: 'requireDelegation: tenant inside its delegation', given: acme('www.acme.test.'), r: strict, want: 'ok' },
    { name: 'requireDelegation: operator tenant is free', given: { name: 'free.example.', tenant: 'ops', principalTenant: 'ops' }, r: strict, want: 'ok' },
    { name: 'requireDelegation: supra-tenant is free', given: system('free.example.'), r: strict, want: 'ok' },
  ];
  for (const r of rows) {
    const v = checkNameClaim(r.r ?? rules, r.given, r.name.startsWith('delegated name') ? [svc('z', 'example.test.', 'zeta')] : existing);
    if (r.want === 'ok') assert.ok(v.ok, `${r.name}: ${JSON.stringify(v)}`);
    else {
      assert.ok(!v.ok, `${r.name}: accepted`);
      assert.deepEqual([v.status, v.message], r.want, r.name);
    }
  }
});

test('messages to a tenant never name another tenant or its service', () => {
  for (const name of ['www.a.example.', 'x.www.a.example.', 'a.example.', 'www.acme.example.test.', 'corp.test.']) {
    const v = checkNameClaim(rules, { name, tenant: 'b', principalTenant: 'b' }, existing);
    assert.ok(!v.ok, name);
    for (const secret of ['svc-a1', 'a1', '"a"', 'acme"', 'tenant "']) assert.ok(!v.message.includes(secret), `${name}: ${v.message}`);
  }
});

test('unservedReason: foreign delegation, tenant row on a reserved name (table)', () => {
  const rows: { name: string; row: NamedService; want: string | undefined }[] = [
    { name: 'owner\'s row', row: svc('1', 'www.acme.example.test.', 'acme'), want: undefined },
    { name: 'row in another tenant\'s delegation', row: svc('2', 'www.acme.example.test.', 'b'), want: 'delegated to another tenant' },
    { name: 'git row in a tenant delegation', row: svc('3', 'www.acme.example.test.', 'default', 'git'), want: 'delegated to another tenant' },
    { name: 'undelegated row', row: svc('4', 'www.free.test.', 'b'), want: undefined },
    { name: 'tenant api row on the apex', row: svc('5', 'example.test.', 'b'), want: 'reserved' },
    { name: 'operator tenant api row on the apex', row: svc('6', 'EXAMPLE.test.', 'default'), want: undefined },
    { name: 'git row on a name server name', row: svc('7', 'ns1.example.test.', 'default', 'git'), want: undefined },
  ];
  for (const r of rows) assert.equal(unservedReason(rules, r.row), r.want, r.name);
});
