import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateConfigObject } from '../../../runtime/config/load.js';
import { isRedirectHost } from '../../../runtime/config/text-rules.js';
import { emptySnapshot, nextSnapshot } from '../../../core/snapshot/snapshot.js';
import type { ServiceRow } from '../../../core/model/types.js';
import { nameRules } from '../../../runtime/tenancy/names.js';
import { answerRedirect } from '../../../runtime/redirect/answer.js';
import { buildRedirectIndex, lookupRedirect, redirectIndexOf, requestHost } from '../../../runtime/redirect/host-index.js';
import { checkRedirectHost } from '../../../runtime/redirect/ownership.js';
import { redirectFields, redirectProblems, type RedirectRow } from '../../../runtime/redirect/rules.js';
import { loadManifests } from '../../../gitops/load/index.js';
import { checkAgainstActual, validateManifests } from '../../../gitops/validate/validate.js';
import '../../../runtime/kinds-all.js';
import { validationEnv } from '../../../gitops/validate/names.js';

const cfg = validateConfigObject({
  dns: { domain: 'example.test' },
  tenancy: { delegations: [{ suffix: 'acme.example.test', tenant: 'acme' }] },
});
const names = nameRules(cfg);
const rule = (id: string, host: string, tenantId = 'default', extra: Partial<RedirectRow> = {}): RedirectRow => ({
  kind: 'redirect', id, host, target: `https://${id}.example.org/`, code: 302, preservePath: true, origin: 'api', revision: 'api:1', tenantId, ...extra,
});
const snap = (rows: { kind: string; id: string }[]) => nextSnapshot(emptySnapshot(), rows.map((row) => ({ op: 'put' as const, row: row as RedirectRow })), 'r', 0);

test('isRedirectHost: host names and wildcards only (table)', () => {
  const rows: [string, boolean][] = [
    ['www.example.com', true], ['WWW.Example.COM', true], ['www.example.com.', true], ['localhost', true], ['*.example.com', true],
    ['xn--bcher-kva.example', true], ['a-b.example', true],
    ['', false], ['*.', false], ['*', false], ['a.*.example.com', false], ['**.example.com', false], ['www.example.com:8080', false],
    ['http://www.example.com', false], ['www.example.com/path', false], ['192.0.2.1', false], ['[::1]', false], ['-a.example', false],
    ['a_b.example', false], ['a..example', false], ['é.example', false], [`${'a'.repeat(64)}.example`, false], [`${'a.'.repeat(127)}ab`, false],
  ];
  for (const [host, want] of rows) assert.equal(isRedirectHost(host), want, host);
});

test('redirectFields and redirectProblems: defaults, normalisation, credentials refused (table)', () => {
  assert.deepEqual(redirectFields({ host: 'Old.Example.COM.', target: 'https://n.example/' }), { host: 'old.example.com', target: 'https://n.example/', code: 302, preservePath: true });
  assert.deepEqual(redirectFields({ host: '*.a.example', target: 'http://n.example', code: 301, preservePath: false }), { host: '*.a.example', target: 'http://n.example', code: 301, preservePath: false });
  const rows: { target: string; want: string[] }[] = [
    { target: 'https://n.example/path?q=1#top', want: [] },
    { target: 'https://user@n.example/', want: ['target: must not carry a user name or password'] },
    { target: 'https://user:pw@n.example/', want: ['target: must not carry a user name or password'] },
  ];
  for (const r of rows) assert.deepEqual(redirectProblems({ target: r.target }).map((p) => `${p.field}: ${p.rule}`), r.want, r.target);
});

test('lookupRedirect: exact beats wildcard, the longest wildcard wins, delegations bound wildcards (table)', () => {
  const idx = buildRedirectIndex([
    rule('exact', 'www.example.com'), rule('wild', '*.example.com'), rule('deeper', '*.b.example.com'),
    rule('tenantwild', '*.example.test', 'default'), rule('acme', 'shop.acme.example.test', 'acme'),
  ], names);
  const rows: { host: string; want: string | undefined }[] = [
    { host: 'www.example.com', want: 'exact' },
    { host: 'a.example.com', want: 'wild' },
    { host: 'x.y.example.com', want: 'wild' },
    { host: 'b.example.com', want: 'wild' },
    { host: 'a.b.example.com', want: 'deeper' },
    { host: 'example.com', want: undefined },
    { host: 'www.example.org', want: undefined },
    { host: 'shop.acme.example.test', want: 'acme' },
    { host: 'other.example.test', want: 'tenantwild' },
    // a name delegated to acme is never answered by another tenant's wildcard
    { host: 'blog.acme.example.test', want: undefined },
  ];
  for (const r of rows) assert.equal(lookupRedirect(idx, r.host, names)?.id, r.want, r.host);
});

test('buildRedirectIndex leaves out rules on names another tenant owns, and says so', () => {
  const left: string[] = [];
  const idx = buildRedirectIndex([rule('stale', 'www.acme.example.test', 'beta'), rule('apex', 'example.test', 'beta'), rule('ok', 'www.acme.example.test', 'acme')], names, (r, why) => left.push(`${r.id}: ${why}`));
  assert.deepEqual(left, ['stale: delegated to another tenant', 'apex: reserved']);
  assert.equal(lookupRedirect(idx, 'www.acme.example.test', names)?.id, 'ok');
});

test('redirectIndexOf is built once per version of the rule table', () => {
  const s1 = snap([rule('a', 'a.example.com')]);
  const i1 = redirectIndexOf(s1, names);
  assert.equal(redirectIndexOf(s1, names), i1);
  const s2 = nextSnapshot(s1, [{ op: 'put', row: rule('b', 'b.example.com') }], 'r2', 0);
  const i2 = redirectIndexOf(s2, names);
  assert.notEqual(i2, i1);
  assert.equal(lookupRedirect(i2, 'b.example.com', names)?.id, 'b');
  assert.equal(lookupRedirect(i1, 'b.example.com', names), undefined, 'the old snapshot keeps its own index');
});

test('requestHost: port, case and trailing dot stripped; absolute-form wins; junk is no host (table)', () => {
  const rows: { host: string | undefined; url?: string; want: string | undefined }[] = [
    { host: 'WWW.Example.com:8080', want: 'www.example.com' },
    { host: 'www.example.com.', want: 'www.example.com' },
    { host: 'www.example.com:', want: 'www.example.com' },
    { host: ' www.example.com ', want: 'www.example.com' },
    { host: 'other.example', url: 'http://www.example.com:81/x', want: 'www.example.com' },
    { host: '[::1]:80', want: undefined },
    { host: undefined, want: undefined },
    { host: '', want: undefined },
    { host: 'a b.example', want: undefined },
    { host: 'a/b', want: undefined },
  ];
  for (const r of rows) assert.equal(requestHost(r.host, r.url), r.want, JSON.stringify(r));
});

test('answerRedirect: codes by method, cache headers, path and query joined (table)', () => {
  const rows: { rule: Pick<RedirectRow, 'target' | 'code' | 'preservePath'>; method?: string; url: string; want: [number, string, string] }[] = [
    { rule: { target: 'https://n.example/base', code: 301, preservePath: true }, url: '/a/b?x=1', want: [301, 'https://n.example/base/a/b?x=1', 'max-age=3600'] },
    { rule: { target: 'https://n.example/base/', code: 301, preservePath: true }, url: '/a', want: [301, 'https://n.example/base/a', 'max-age=3600'] },
    { rule: { target: 'https://n.example/base', code: 302, preservePath: true }, url: '/', want: [302, 'https://n.example/base', 'no-store'] },
    { rule: { target: 'https://n.example', code: 302, preservePath: true }, url: '/?q=1', want: [302, 'https://n.example/?q=1', 'no-store'] },
    { rule: { target: 'https://n.example/p?keep=1#frag', code: 302, preservePath: true }, url: '/x?q=2', want: [302, 'https://n.example/p/x?keep=1&q=2#frag', 'no-store'] },
    { rule: { target: 'https://n.example/p?keep=1', code: 302, preservePath: false }, url: '/x?q=2', want: [302, 'https://n.example/p?keep=1', 'no-store'] },
    { rule: { target: 'https://n.example', code: 301, preservePath: true }, url: '//evil.example/x', want: [301, 'https://n.example//evil.example/x', 'max-age=3600'] },
    { rule: { target: 'https://n.example:8443/b', code: 301, preservePath: true }, url: 'http://old.example/abs?z', want: [301, 'https://n.example:8443/b/abs?z', 'max-age=3600'] },
    { rule: { target: 'https://n.example', code: 301, preservePath: true }, url: '*', want: [301, 'https://n.example/', 'max-age=3600'] },
    { rule: { target: 'https://n.example', code: 301, preservePath: true }, method: 'POST', url: '/f', want: [308, 'https://n.example/f', 'max-age=3600'] },
    { rule: { target: 'https://n.example', code: 302, preservePath: true }, method: 'PUT', url: '/f', want: [307, 'https://n.example/f', 'no-store'] },
    { rule: { target: 'https://n.example', code: 302, preservePath: false }, method: 'HEAD', url: '/f', want: [302, 'https://n.example/', 'no-store'] },
    { rule: { target: 'https://bücher.example/ä', code: 302, preservePath: false }, url: '/', want: [302, 'https://xn--bcher-kva.example/%C3%A4', 'no-store'] },
    { rule: { target: 'https://n.example', code: 302, preservePath: true }, url: '/\u00e9', want: [302, 'https://n.example/%E9', 'no-store'] },
  ];
  for (const r of rows) {
    const a = answerRedirect(r.rule, r.method ?? 'GET', r.url);
    assert.deepEqual([a.status, a.location, a.cacheControl], r.want, JSON.stringify(r));
  }
});

test('checkRedirectHost: one rule per host, other tenants\' names, reserved and delegated names (table)', () => {
  const svc = (id: string, domain: string, tenantId: string): ServiceRow => ({
    kind: 'service', id, name: `svc-${id}`, domain, algorithm: 'round-robin', ttl: 60, poolId: null, chain: [], whenAllUnhealthy: 'all', asnRules: [],
    origin: 'api', revision: 'api:1', tenantId,
  });
  const s = snap([rule('r1', 'www.beta.test', 'beta'), rule('r2', '*.wild.beta.test', 'beta'), rule('own', 'mine.alpha.test', 'alpha'), svc('s1', 'app.beta.test.', 'beta'), svc('s2', 'www.alpha.test.', 'alpha')]);
  const alpha = (host: string, selfId?: string) => checkRedirectHost(names, s, { host, tenant: 'alpha', principalTenant: 'alpha', selfId });
  const rows: { name: string; v: ReturnType<typeof alpha>; want: [number, string] | 'ok' }[] = [
    { name: 'free name', v: alpha('new.alpha.test'), want: 'ok' },
    { name: 'own service name: a redirect may share it', v: alpha('www.alpha.test'), want: 'ok' },
    { name: 'own rule, same host', v: alpha('mine.alpha.test'), want: [409, 'host: mine.alpha.test already has a redirect rule (own)'] },
    { name: 'own rule renamed onto itself', v: alpha('mine.alpha.test', 'own'), want: 'ok' },
    { name: 'another tenant\'s rule', v: alpha('www.beta.test'), want: [409, 'host: domain www.beta.test. is not available'] },
    { name: 'another tenant\'s service', v: alpha('app.beta.test'), want: [409, 'host: domain app.beta.test. is not available'] },
    { name: 'under another tenant\'s wildcard', v: alpha('x.wild.beta.test'), want: [409, 'host: domain x.wild.beta.test. is not available'] },
    { name: 'a wildcard above another tenant\'s names', v: alpha('*.beta.test'), want: [409, 'host: domain beta.test. is not available'] },
    { name: 'the zone apex', v: alpha('example.test'), want: [403, 'host: name example.test. is reserved'] },
    { name: 'a wildcard under the apex claims the apex', v: alpha('*.example.test'), want: [403, 'host: name example.test. is reserved'] },
    { name: 'delegated to another tenant', v: alpha('shop.acme.example.test'), want: [403, 'host: name shop.acme.example.test. is not delegated to your tenant'] },
  ];
  for (const r of rows) {
    if (r.want === 'ok') { assert.deepEqual(r.v, { ok: true }, r.name); continue; }
    assert.equal(r.v.ok, false, r.name);
    if (!r.v.ok) assert.deepEqual([r.v.status, r.v.message], r.want, r.name);
  }
  // the system key is told who holds the name
  const sys = checkRedirectHost(names, s, { host: 'www.beta.test', tenant: 'default', principalTenant: null });
  assert.ok(!sys.ok && /tenant "beta"/.test(sys.message), JSON.stringify(sys));
});

test('git Redirect manifests: schema and semantic problems at file:line; names against the running state (table)', () => {
  const env = validationEnv(cfg);
  const doc = (name: string, spec: string) => `apiVersion: gslb/v1\nkind: Redirect\nmetadata:\n  name: ${name}\nspec:\n${spec}`;
  const rows: { name: string; text: string; want: RegExp[] }[] = [
    { name: 'valid', text: doc('a', '  host: a.example.com\n  target: https://b.example.org\n'), want: [] },
    { name: 'missing target', text: doc('a', '  host: a.example.com\n'), want: [/^r\.yaml:6(:\d+)?: spec: missing required key "target"/] },
    { name: 'bad host, target, code, preservePath', text: doc('a', '  host: a.example.com:80\n  target: ftp://x\n  code: 303\n  preservePath: "yes"\n'),
      want: [/^r\.yaml:6(:\d+)?: spec\.host = "a\.example\.com:80": must be a host name/, /^r\.yaml:7(:\d+)?: spec\.target = "ftp:\/\/x": must be an http or https URL/, /^r\.yaml:8(:\d+)?: spec\.code = 303: must be one of 301, 302/, /^r\.yaml:9(:\d+)?: spec\.preservePath = "yes": must be of type boolean/] },
    { name: 'credentials in the target', text: doc('a', '  host: a.example.com\n  target: https://u:p@b.example.org\n'), want: [/^r\.yaml:7(:\d+)?: spec\.target = .*must not carry a user name or password/] },
    { name: 'one host twice', text: `${doc('a', '  host: a.example.com\n  target: https://b.example.org\n')}---\n${doc('b', '  host: A.example.com.\n  target: https://c.example.org\n')}`,
      want: [/^r\.yaml:14(:\d+)?: spec\.host = "A\.example\.com\.": host is already declared by Redirect "a" \(r\.yaml\)/] },
    { name: 'delegated to another tenant', text: doc('a', '  host: "*.acme.example.test"\n  target: https://b.example.org\n'), want: [/^r\.yaml:6(:\d+)?: spec\.host = .*under acme\.example\.test\., delegated to another tenant.*manifests declare redirect rules of the default tenant/] },
  ];
  for (const r of rows) {
    const { problems } = validateManifests(loadManifests([{ path: 'r.yaml', text: r.text }]).manifests, env);
    assert.equal(problems.length, r.want.length, `${r.name}: ${problems.join('\n')}`);
    r.want.forEach((w, i) => assert.match(problems[i]!, w, r.name));
  }
  const { desired } = validateManifests(loadManifests([{ path: 'r.yaml', text: doc('a', '  host: A.Example.com\n  target: https://b.example.org\n') }]).manifests, env);
  assert.deepEqual(desired, [{ kind: 'redirect', key: 'a', source: 'r.yaml', fields: { host: 'a.example.com', target: 'https://b.example.org', code: 302, preservePath: true } }]);

  const actual = snap([rule('t1', 'www.t.example', 'beta'), rule('d1', 'rest.example.com', 'default')]);
  const against: { name: string; host: string; kind?: string; want: string[] }[] = [
    { name: 'free', host: 'free.example.com', want: [] },
    { name: 'another tenant\'s rule', host: 'www.t.example', want: ['r.yaml: Redirect "a": host www.t.example, name www.t.example. is not available: a redirect rule of another tenant uses it'] },
    { name: 'under another tenant\'s rule', host: 'x.www.t.example', want: ['r.yaml: Redirect "a": host x.www.t.example, name x.www.t.example. is not available: a service or redirect rule of another tenant is at, under or above it'] },
    { name: 'a REST rule of the default tenant', host: 'rest.example.com', want: ['r.yaml: Redirect "a": host rest.example.com, name rest.example.com. already has a redirect rule created over the REST API (d1); delete it there first'] },
    { name: 'a git service on another tenant\'s redirect host', host: 'www.t.example.', kind: 'service', want: ['r.yaml: Service "a": domain www.t.example. is not available: a redirect rule of another tenant uses it'] },
  ];
  for (const r of against) {
    const d = r.kind === 'service' ? { kind: 'service', key: 'a', source: 'r.yaml', fields: { domain: r.host } } : { kind: 'redirect', key: 'a', source: 'r.yaml', fields: { host: r.host } };
    const out = checkAgainstActual([d] as never, actual, env);
    assert.deepEqual(out, r.want, r.name);
    for (const p of out) assert.ok(!p.includes('beta') && !p.includes('t1'), p);
  }
});
