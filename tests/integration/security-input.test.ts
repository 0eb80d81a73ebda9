import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestDaemon, api, type TestDaemon } from '../helpers/daemon.js';
import { parseConfigText } from '../../runtime/config/load.js';

// docs/api.md "Input rules": the same rules over REST, in git manifests and in the config file.

let d: TestDaemon;
const ids: Record<string, string> = {};
const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => api(d.url, method, `/api/v1${path}`, body, headers);

before(async () => {
  d = await startTestDaemon(); // dev mode: every request is supra-tenant, so tenant and key routes are reachable
  ids.pool = (await call('POST', '/pools', { name: 'input-rules' })).body.id;
  ids.member = (await call('POST', `/pools/${ids.pool}/members`, { ipAddress: '192.0.2.1', port: 80 })).body.id;
});
after(async () => { await d?.stop(); });

/** Every character class the name rule refuses, with one example each. */
const UNPRINTABLE: [string, string][] = [
  ['NUL', '\u0000'], ['C0 (BEL)', '\u0007'], ['tab', '\t'], ['newline', '\n'], ['DEL', '\u007f'], ['C1 (NEL)', '\u0085'],
  ['bidi override (RLO)', '\u202e'], ['bidi embedding (LRE)', '\u202a'], ['bidi isolate (RLI)', '\u2067'], ['pop isolate (PDI)', '\u2069'],
  ['zero-width space', '\u200b'], ['zero-width joiner', '\u200d'], ['BOM', '\ufeff'], ['soft hyphen (Cf)', '\u00ad'],
  ['line separator', '\u2028'], ['paragraph separator', '\u2029'], ['lone surrogate', '\ud800'],
];

/** One name field over REST: where it is sent and the body around the name. */
const NAME_FIELDS: { field: string; method: string; path: () => string; body: (name: string) => Record<string, unknown>; ok: number }[] = [
  { field: 'name', method: 'POST', path: () => '/pools', body: (name) => ({ name }), ok: 201 },
  { field: 'name', method: 'PUT', path: () => `/pools/${ids.pool}`, body: (name) => ({ name }), ok: 200 },
  { field: 'name', method: 'POST', path: () => '/services', body: (name) => ({ name, domain: `n${Math.random().toString(36).slice(2)}.example.test.` }), ok: 201 },
  { field: 'displayName', method: 'POST', path: () => '/users', body: (displayName) => ({ email: `u${Math.random().toString(36).slice(2)}@example.test`, password: 'user-pass-123', role: 'viewer', displayName }), ok: 201 },
  { field: 'name', method: 'POST', path: () => '/tenants', body: (name) => ({ id: `t${Math.random().toString(36).slice(2, 10)}`, name }), ok: 201 },
  { field: 'name', method: 'POST', path: () => '/tenants/default/apikeys', body: (name) => ({ name }), ok: 201 },
];

test('names: control, format (Cf), bidi, zero-width and separator characters are refused with 400 naming the field', async () => {
  for (const f of NAME_FIELDS) {
    const good = await call(f.method, f.path(), f.body('Café ☕ 東京 – prod'));
    assert.equal(good.status, f.ok, `${f.method} ${f.path()} printable unicode: ${JSON.stringify(good.body)}`);
    for (const [what, ch] of UNPRINTABLE) {
      const r = await call(f.method, f.path(), f.body(`web${ch}prod`));
      assert.equal(r.status, 400, `${f.method} ${f.path()} ${f.field} with ${what}: ${JSON.stringify(r.body)}`);
      assert.match(r.body.error, new RegExp(`^${f.field}: must be printable text`), `${f.method} ${f.path()} ${what}`);
    }
  }
  // the first-user setup form takes a display name too
  const setup = await call('POST', '/auth/setup', { email: 'first@example.test', password: 'first-pass-123', displayName: 'admin\u202egnp.exe' });
  assert.deepEqual([setup.status, /^displayName: must be printable text/.test(setup.body.error)], [400, true], JSON.stringify(setup.body));
  const asn = await call('POST', '/services', { name: 'asn-org', domain: 'asn-org.example.test.', algorithm: 'asn', asnRules: [{ org: 'Evil\u202eCorp', endpoint: '192.0.2.1' }] });
  assert.equal(asn.status, 400, JSON.stringify(asn.body));
});

test('numbers and URLs: weight and priority 0..65535, URL ports 1..65535, IPs without a scope id (REST, table)', async () => {
  const member = (over: Record<string, unknown>) => ({ ipAddress: '192.0.2.50', port: 8000 + Math.floor(Math.random() * 1000), ...over });
  const rows: { name: string; method: string; path: () => string; body: unknown; status: number; error?: RegExp }[] = [
    { name: 'weight at the bound', method: 'POST', path: () => `/pools/${ids.pool}/members`, body: member({ weight: 65535 }), status: 201 },
    { name: 'weight above the bound', method: 'POST', path: () => `/pools/${ids.pool}/members`, body: member({ weight: 65536 }), status: 400, error: /^weight: must be <= 65535$/ },
    { name: 'weight near 1e308', method: 'POST', path: () => `/pools/${ids.pool}/members`, body: member({ weight: 1e308 }), status: 400, error: /^weight: must be <= 65535$/ },
    { name: 'weight above the bound on update', method: 'PUT', path: () => `/members/${ids.member}`, body: { weight: 70000 }, status: 400, error: /^weight: must be <= 65535$/ },
    { name: 'priority above the bound', method: 'POST', path: () => `/pools/${ids.pool}/members`, body: member({ priority: 65536 }), status: 400, error: /^priority: must be <= 65535$/ },
    { name: 'priority above the bound on update', method: 'PUT', path: () => `/members/${ids.member}`, body: { priority: 1e12 }, status: 400, error: /^priority: must be <= 65535$/ },
    { name: 'geo rule priority above the bound', method: 'POST', path: () => `/pools/${ids.pool}/georules`, body: { cidr: '10.0.0.0/8', endpoint: '192.0.2.1', priority: 65536 }, status: 400, error: /^priority: must be <= 65535$/ },
    { name: 'geo rule priority negative', method: 'POST', path: () => `/pools/${ids.pool}/georules`, body: { cidr: '10.0.0.0/8', endpoint: '192.0.2.1', priority: -1 }, status: 400, error: /^priority: must be >= 0$/ },
    { name: 'rumUrl with a port', method: 'POST', path: () => `/pools/${ids.pool}/members`, body: member({ rumUrl: 'https://probe.example.test:8443/rum.gif' }), status: 201 },
    { name: 'rumUrl port above 65535', method: 'POST', path: () => `/pools/${ids.pool}/members`, body: member({ rumUrl: 'http://probe.example.test:65536/x' }), status: 400, error: /rumUrl: must be an http or https URL/ },
    { name: 'rumUrl port 99999 on update', method: 'PUT', path: () => `/members/${ids.member}`, body: { rumUrl: 'http://probe.example.test:99999/x' }, status: 400, error: /rumUrl: must be an http or https URL/ },
    { name: 'rumUrl port 0', method: 'POST', path: () => `/pools/${ids.pool}/members`, body: member({ rumUrl: 'http://probe.example.test:0/x' }), status: 400, error: /rumUrl: must be an http or https URL/ },
    { name: 'rumUrl with a newline in the host', method: 'POST', path: () => `/pools/${ids.pool}/members`, body: member({ rumUrl: 'http://probe.exa\nmple.test/x' }), status: 400, error: /rumUrl: must be an http or https URL/ },
    { name: 'webhookURL port above 65535', method: 'PUT', path: () => `/pools/${ids.pool}/healthcheck`, body: { type: 'webhook', webhookURL: 'http://127.0.0.1:70000/hc' }, status: 400, error: /webhookURL: must be an http or https URL/ },
    { name: 'member ipAddress with a scope id', method: 'POST', path: () => `/pools/${ids.pool}/members`, body: member({ ipAddress: 'fe80::1%eth0' }), status: 400, error: /^ipAddress: must not carry a scope id \(%eth0\)$/ },
    { name: 'numeric scope id on update', method: 'PUT', path: () => `/members/${ids.member}`, body: { ipAddress: 'fe80::1%2' }, status: 400, error: /^ipAddress: must not carry a scope id \(%2\)$/ },
    { name: 'geo rule endpoint with a scope id', method: 'POST', path: () => `/pools/${ids.pool}/georules`, body: { cidr: '10.0.0.0/8', endpoint: 'fe80::1%eth0' }, status: 400, error: /^endpoint: must not carry a scope id \(%eth0\)$/ },
    { name: 'geo rule CIDR with a scope id', method: 'POST', path: () => `/pools/${ids.pool}/georules`, body: { cidr: 'fe80::%eth0/64', endpoint: '192.0.2.1' }, status: 400, error: /^cidr: must not carry a scope id \(%eth0\)$/ },
    { name: 'asn rule endpoint with a scope id', method: 'POST', path: () => '/services', body: { name: 'asn-scope', domain: 'asn-scope.example.test.', algorithm: 'asn', asnRules: [{ asn: 64500, endpoint: 'fe80::1%eth0' }] }, status: 400, error: /must not carry a scope id \(%eth0\)/ },
    { name: 'plain link-local IPv6 is fine', method: 'POST', path: () => `/pools/${ids.pool}/members`, body: member({ ipAddress: 'fe80::1' }), status: 201 },
  ];
  for (const r of rows) {
    const res = await call(r.method, r.path(), r.body);
    assert.equal(res.status, r.status, `${r.name}: ${JSON.stringify(res.body)}`);
    if (r.error) assert.match(res.body.error, r.error, r.name);
  }
  const stored = (await call('GET', `/members/${ids.member}`)).body;
  assert.deepEqual([stored.ipAddress, stored.weight, stored.priority, stored.rumUrl], ['192.0.2.1', 1, 0, null], 'refused updates changed nothing');
});

test('git manifests refuse the same input, each with file:line (POST /gitops/plan)', async () => {
  const text = [
    'apiVersion: gslb/v1', 'kind: Pool', 'metadata:', '  name: rules', 'spec:', '  members:',
    '    - ipAddress: fe80::1%eth0', '      port: 80', //             7, 8
    '    - ipAddress: 192.0.2.7', '      port: 80', '      weight: 65536', //                9, 10, 11
    '      priority: 70000', '      rumUrl: http://rum.example.test:65536/', //        12, 13
    '  geoRules:', '    - cidr: 10.0.0.0/8', '      endpoint: fe80::2%eth1', '      priority: 65536', // 14-17
    '',
  ].join('\n');
  const r = await call('POST', '/gitops/plan', { files: [{ path: 'pools/rules.yaml', text }] });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.valid, false);
  const problems = r.body.problems as string[];
  const want: [number, RegExp][] = [
    [7, /spec\.members\.0\.ipAddress = "fe80::1%eth0": must not carry a scope id \(%eth0\)/],
    [11, /spec\.members\.1\.weight = 65536: must be <= 65535/],
    [12, /spec\.members\.1\.priority = 70000: must be <= 65535/],
    [13, /spec\.members\.1\.rumUrl = .*must be an http or https URL/],
    [16, /spec\.geoRules\.0\.endpoint = "fe80::2%eth1": must not carry a scope id \(%eth1\)/],
    [17, /spec\.geoRules\.0\.priority = 65536: must be <= 65535/],
  ];
  for (const [line, re] of want) {
    assert.ok(problems.some((p) => p.startsWith(`pools/rules.yaml:${line}:`) && re.test(p)), `line ${line} ${re}\n${problems.join('\n')}`);
  }
});

test('the config file refuses the same input (table)', () => {
  const rows: { name: string; yaml: string; want: RegExp }[] = [
    { name: 'endpoint with a scope id', yaml: 'loadbalancer: {endpoints: ["fe80::1%eth0"]}', want: /loadbalancer\.endpoints\.0 = "fe80::1%eth0": must not carry a scope id \(%eth0\)/ },
    { name: 'map-file rule endpoint with a scope id', yaml: 'loadbalancer: {mapFile: {rules: [{cidr: 10.0.0.0/8, endpoint: "fe80::1%eth0"}]}}', want: /loadbalancer\.mapFile\.rules\.0\.endpoint = "fe80::1%eth0": must not carry a scope id \(%eth0\)/ },
    { name: 'map-file rule CIDR with a scope id', yaml: 'loadbalancer: {mapFile: {rules: [{cidr: "fe80::%eth0/64", endpoint: 192.0.2.1}]}}', want: /loadbalancer\.mapFile\.rules\.0\.cidr = "fe80::%eth0\/64": must not carry a scope id \(%eth0\)/ },
    { name: 'weight key with a scope id', yaml: 'loadbalancer: {weights: {"fe80::1%eth0": 2}}', want: /loadbalancer\.weights\.fe80::1%eth0 = "fe80::1%eth0": keys must not carry a scope id \(%eth0\)/ },
    { name: 'weight above 65535', yaml: 'loadbalancer: {weights: {192.0.2.1: 65536}}', want: /loadbalancer\.weights\.192\.0\.2\.1 = 65536: must be <= 65535/ },
    { name: 'alert webhook port above 65535', yaml: 'alerts: {webhooks: [{url: "http://127.0.0.1:65536/hook"}]}', want: /alerts\.webhooks\.0\.url = "http:\/\/127\.0\.0\.1:65536\/hook": must be an http or https URL/ },
    { name: 'script check without health.allowScripts', yaml: 'health: {enabled: true, type: script, scriptContent: "exit 0"}', want: /health\.type = "script": script health checks are disabled on this server \(health\.allowScripts\)/ },
    { name: 'script check outside scriptDirs', yaml: 'health: {enabled: true, type: script, scriptPath: /bin/true, allowScripts: true, scriptDirs: [/nonexistent-gslbd-dir]}', want: /health\.scriptPath = "\/bin\/true": scriptPath \/bin\/true .*is outside the allowed script directories \(health\.scriptDirs: \/nonexistent-gslbd-dir\)/ },
  ];
  for (const r of rows) {
    let err: unknown;
    try { parseConfigText(r.yaml); } catch (e) { err = e; }
    assert.ok(err instanceof Error, `${r.name}: accepted`);
    assert.match(err.message, r.want, r.name);
  }
  assert.equal(parseConfigText('loadbalancer: {weights: {192.0.2.1: 65535}, endpoints: [192.0.2.1, "fe80::1"]}').loadbalancer.weights['192.0.2.1'], 65535);
});

test('bodies: an empty JSON body where none is required is no body; empty or invalid JSON where one is required stays 400', async () => {
  const json = { 'content-type': 'application/json' };
  const raw = (method: string, path: string, body: string | undefined) => fetch(`${d.url}/api/v1${path}`, { method, headers: json, ...(body === undefined ? {} : { body }) });
  const p = (await call('POST', '/pools', { name: 'to-delete' })).body.id as string;
  const m = (await call('POST', `/pools/${p}/members`, { ipAddress: '192.0.2.9', port: 80 })).body.id as string;
  const rows: { name: string; method: string; path: string; body?: string; status: number; error?: RegExp }[] = [
    { name: 'DELETE member, JSON content type, no body', method: 'DELETE', path: `/members/${m}`, status: 204 },
    { name: 'DELETE pool, JSON content type, empty body', method: 'DELETE', path: `/pools/${p}`, body: '', status: 204 },
    { name: 'DELETE with invalid JSON', method: 'DELETE', path: `/pools/${ids.pool}`, body: '{bad', status: 400, error: /^malformed JSON/ },
    { name: 'POST that needs a body, empty', method: 'POST', path: '/pools', body: '', status: 400, error: /request body is empty/ },
    { name: 'POST with invalid JSON', method: 'POST', path: '/pools', body: '{"name":', status: 400, error: /^malformed JSON/ },
    { name: 'prototype poisoning still refused', method: 'POST', path: '/pools', body: '{"name":"x","__proto__":{"polluted":1}}', status: 400 },
  ];
  for (const r of rows) {
    const res = await raw(r.method, r.path, r.body);
    const text = await res.text();
    assert.equal(res.status, r.status, `${r.name}: ${text}`);
    if (r.error) assert.match(JSON.parse(text).error, r.error, r.name);
  }
  assert.equal((await call('GET', `/pools/${ids.pool}`)).status, 200, 'the invalid DELETE deleted nothing');
});
