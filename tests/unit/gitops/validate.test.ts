import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadManifests } from '../../../gitops/load/index.js';
import { sortProblems, validateManifests } from '../../../gitops/validate/validate.js';
import { registerManifestKind } from '../../../runtime/kinds-all.js';
import type { ValidationEnv } from '../../../runtime/ports/kinds.js';

const pool = (name: string, spec: string) => `apiVersion: gslb/v1\nkind: Pool\nmetadata:\n  name: ${name}\nspec:\n${spec}`;
const svc = (name: string, spec: string) => `apiVersion: gslb/v1\nkind: Service\nmetadata:\n  name: ${name}\nspec:\n${spec}`;
const EU = pool('eu', '  members:\n    - ipAddress: 10.0.0.1\n      port: 80\n    - ipAddress: 10.0.0.2\n      port: 80\n');

function check(files: Record<string, string>, env: ValidationEnv = {}) {
  const l = loadManifests(Object.entries(files).map(([path, text]) => ({ path, text })));
  const v = validateManifests(l.manifests, env);
  return { problems: sortProblems([...l.problems, ...v.problems]), desired: v.desired };
}

test('manifest problems are each reported with file:line (table)', () => {
  const rows: { name: string; given: Record<string, string>; env?: ValidationEnv; want: string[] }[] = [
    { name: 'valid pool and service', given: { 'p.yaml': EU, 's.yaml': svc('www', '  domain: www.example.test.\n  pool: eu\n') }, want: [] },
    { name: 'YAML syntax error (duplicate key)', given: { 'p.yaml': 'apiVersion: gslb/v1\nkind: Pool\nkind: Pool\nmetadata: {name: a}\nspec: {}\n' }, want: ['p.yaml:3:1: YAML syntax error: Map keys must be unique (yaml-syntax)'] },
    { name: 'unknown kind', given: { 'x.yaml': 'apiVersion: gslb/v1\nkind: Gizmo\nmetadata: {name: a}\nspec: {}\n' }, want: ['x.yaml:2:7: kind = "Gizmo": unknown kind; known kinds: AlertTarget, ApiKey, Form, Pool, Redirect, RoutingTest, Service, TxtRecord (unknown-kind)'] },
    { name: 'wrong apiVersion', given: { 'p.yaml': EU.replace('gslb/v1', 'gslb/v2') }, want: ['p.yaml:1:13: apiVersion: expected "gslb/v1", got "gslb/v2" (api-version)'] },
    { name: 'bad port and ip', given: { 'p.yaml': pool('eu', '  members:\n    - ipAddress: 10.0.0.300\n      port: 0\n') }, want: ['p.yaml:7:18: spec.members.0.ipAddress = "10.0.0.300": must be a valid IPv4 or IPv6 address (format)', 'p.yaml:8:13: spec.members.0.port = 0: must be >= 1 (range)'] },
    { name: 'unknown spec key', given: { 'p.yaml': pool('eu', '  memberz: []\n') }, want: ['p.yaml:6:3: spec.memberz = []: unknown key "memberz"; allowed keys: members, healthCheck, geoRules (unknown-field)'] },
    { name: 'missing metadata.name', given: { 'p.yaml': 'apiVersion: gslb/v1\nkind: Pool\nmetadata: {}\nspec: {}\n' }, want: ['p.yaml:3:11: metadata: missing required key "name" (required-field)'] },
    { name: 'duplicate member ip:port', given: { 'p.yaml': pool('eu', '  members:\n    - {ipAddress: 10.0.0.1, port: 80}\n    - {ipAddress: 10.0.0.1, port: 80}\n') }, want: ['p.yaml:8:7: spec.members.1 = {"ipAddress":"10.0.0.1","port":80}: member 10.0.0.1:80 is listed twice in pool "eu" (first at members[0]); ip:port must be unique per pool'] },
    { name: 'duplicate name across files', given: { 'a.yaml': EU, 'b.yaml': EU }, want: ['b.yaml:4:9: metadata.name = "eu": Pool "eu" is already declared at a.yaml:4; names are unique per kind (unique-name)'] },
    { name: 'service references a missing pool', given: { 's.yaml': svc('www', '  domain: www.example.test.\n  pool: nowhere\n') }, want: ['s.yaml:7:9: spec.pool = "nowhere": no Pool named "nowhere" in the repo (semantic)'] },
    { name: 'asn without rules', given: { 'p.yaml': EU, 's.yaml': svc('www', '  domain: www.example.test.\n  pool: eu\n  algorithm: asn\n') }, env: { asnDb: true }, want: ['s.yaml:6:3: spec.asnRules = (unset): at least one rule is required when algorithm is asn'] },
    { name: 'asn rule endpoint outside the pool', given: { 'p.yaml': EU, 's.yaml': svc('www', '  domain: www.example.test.\n  pool: eu\n  algorithm: asn\n  asnRules:\n    - {asn: 64500, endpoint: 10.9.9.9}\n') }, env: { asnDb: true }, want: ['s.yaml:10:30: spec.asnRules.0.endpoint = "10.9.9.9": must be the ipAddress of a member of pool "eu"'] },
    { name: 'geo-ip without a configured db', given: { 'p.yaml': EU, 's.yaml': svc('www', '  domain: www.example.test.\n  pool: eu\n  algorithm: geo-ip\n') }, env: { geoipDb: false }, want: ['s.yaml:8:14: spec.algorithm = "geo-ip": geo-ip needs loadbalancer.geoip.dbPath in the daemon configuration'] },
    { name: 'geo-ip with the db unknown (offline) passes', given: { 'p.yaml': EU, 's.yaml': svc('www', '  domain: www.example.test.\n  pool: eu\n  algorithm: geo-ip\n') }, want: [] },
    { name: 'two services, one domain', given: { 'p.yaml': EU, 's.yaml': `${svc('a', '  domain: www.example.test.\n  pool: eu\n')}---\n${svc('b', '  domain: WWW.example.test.\n  pool: eu\n')}` }, want: ['s.yaml:14:11: spec.domain = "WWW.example.test.": domain is already served by Service "a" (s.yaml)'] },
    { name: 'webhook check without URL', given: { 'p.yaml': `${EU}  healthCheck:\n    type: webhook\n` }, want: ['p.yaml:12:5: spec.healthCheck.webhookURL = (unset): required when type is webhook'] },
    { name: 'georule endpoint not a member', given: { 'p.yaml': `${EU}  geoRules:\n    - {cidr: 10.1.0.0/16, endpoint: 10.0.0.9}\n` }, want: ['p.yaml:12:37: spec.geoRules.0.endpoint = "10.0.0.9": must be the ipAddress of a member of pool "eu"'] },
    { name: 'read-only key in a member', given: { 'p.yaml': pool('eu', '  members:\n    - {ipAddress: 10.0.0.1, port: 80, poolId: x}\n') }, want: ['p.yaml:7:47: spec.members.0.poolId = "x": "poolId" is set by the controller; remove it from the manifest'] },
  ];
  for (const r of rows) {
    const { problems } = check(r.given, r.env);
    assert.equal(problems.length, r.want.length, `${r.name}: ${JSON.stringify(problems)}`);
    r.want.forEach((w, i) => assert.ok(problems[i]!.startsWith(w), `${r.name}: got ${problems[i]}, want ${w}`));
  }
});

test('every problem of a bad repo is reported, not only the first', () => {
  const { problems } = check({
    'a.yaml': pool('eu', '  members:\n    - {ipAddress: bad, port: 80}\n'),
    'b.yaml': 'kind: [\n',
    'c.yaml': svc('www', '  domain: nodot\n  pool: missing\n'),
  });
  assert.deepEqual(problems.map((p) => p.split(':')[0]), ['a.yaml', 'b.yaml', 'c.yaml', 'c.yaml']);
});

test('manifests map to desired rows with natural keys and refs by key', () => {
  const { problems, desired } = check({
    'p.yaml': `${EU}  healthCheck: {type: http}\n  geoRules:\n    - {cidr: 10.1.0.0/16, endpoint: 10.0.0.2}\n`,
    's.yaml': svc('www', '  domain: www.example.test.\n  pool: eu\n  algorithm: wrr\n'),
  });
  assert.deepEqual(problems, []);
  assert.deepEqual(desired.map((d) => `${d.kind}:${d.key}`), ['pool:eu', 'healthcheck:eu', 'member:eu/10.0.0.1:80', 'member:eu/10.0.0.2:80', 'georule:eu/10.1.0.0/16/10.0.0.2', 'service:www']);
  const member = desired.find((d) => d.kind === 'member')!;
  assert.deepEqual(member.fields, { ipAddress: '10.0.0.1', port: 80, weight: 1, priority: 0, enabled: true, rumUrl: null });
  assert.deepEqual(member.refs, [{ field: 'poolId', kind: 'pool', key: 'eu' }]);
  const service = desired.find((d) => d.kind === 'service')!;
  assert.equal(service.fields.algorithm, 'weighted-round-robin');
  assert.equal(service.fields.ttl, 60);
  assert.equal(service.source, 's.yaml');
});

test('a new kind needs only a schema and a mapper (registry)', () => {
  registerManifestKind({ kind: 'TestNote', schema: 'manifest.v1.schema.json', map: (m) => [{ kind: 'pool', key: `note-${m.name}`, fields: { name: m.name } }] });
  const { problems, desired } = check({ 'n.yaml': 'apiVersion: gslb/v1\nkind: TestNote\nmetadata: {name: hello}\nspec: {}\n' });
  assert.deepEqual(problems, []);
  assert.deepEqual(desired.map((d) => d.key), ['note-hello']);
});
