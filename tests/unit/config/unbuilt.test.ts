import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, parseConfigText } from '../../../runtime/config/load.js';
import { UNBUILT_KEYS, checkUnbuiltEnv, type UnbuiltKey } from '../../../runtime/config/unbuilt.js';
import { ValidationError } from '../../../runtime/errors.js';

/** One row per key of UNBUILT_KEYS: the key set in a file (on line 3) and the problem it must give. */
const ROWS: { key: string; yaml: string; want: RegExp }[] = [
  { key: 'bgp.enabled', yaml: 'bgp:\n  enabled: true\n  localASN: 65000\n  routerID: 192.0.2.1', want: /^config\.yaml:3: bgp\.enabled = true: BGP is not built yet; remove the key or set it to false/ },
  { key: 'bgp.peers', yaml: 'bgp:\n  peers: [{remoteASN: 65001, remoteAddr: 192.0.2.2, password: peer-pw}]', want: /^config\.yaml:3: bgp\.peers = \[\{"remoteASN":65001,"remoteAddr":"192\.0\.2\.2"\}\]: BGP is not built yet; remove the key or leave it empty/ },
  { key: 'bgp.nodePrefixes', yaml: 'bgp:\n  nodePrefixes: [192.0.2.0/24]', want: /^config\.yaml:3: bgp\.nodePrefixes = \["192\.0\.2\.0\/24"\]: BGP is not built yet; remove the key or leave it empty/ },
  { key: 'bgp.poolPrefixes', yaml: 'bgp:\n  poolPrefixes: [{poolID: p1, prefixes: [198.51.100.0/24]}]', want: /^config\.yaml:3: bgp\.poolPrefixes = .*: BGP is not built yet; remove the key or leave it empty/ },
];
const SECRETS = ['peer-pw'];

function problemsOf(yaml: string): string[] {
  try {
    parseConfigText(yaml, 'config.yaml');
  } catch (err) {
    assert.ok(err instanceof ValidationError, String(err));
    return err.problems;
  }
  return [];
}

test('every row of the unbuilt table has a test row, and no more', () => {
  assert.deepEqual(ROWS.map((r) => r.key).sort(), UNBUILT_KEYS.map((k) => k.path.join('.')).sort());
});

for (const row of ROWS) {
  test(`refused while unbuilt: ${row.key}`, () => {
    // another key on line 1, so the line number is checked
    const problems = problemsOf(`node: {id: n1}\n${row.yaml}\n`);
    const mine = problems.filter((p) => p.includes(`${row.key} = `));
    assert.equal(mine.length, 1, problems.join('\n'));
    assert.match(mine[0]!, row.want);
    for (const s of SECRETS) assert.ok(!problems.join('\n').includes(s), `${s} is not quoted`);
  });
}

test('keys at their defaults, spelled out or left out, stay accepted', () => {
  const rows = [
    '',
    'bgp: {enabled: false}',
    'redirect: {enabled: false, listenAddr: 127.0.0.1}',
    'bgp: {enabled: false, peers: [], nodePrefixes: [], poolPrefixes: [], localASN: 65000, routerID: 192.0.2.1}',
    'dns: {axfr: {enabled: false, requireTsig: false, tsigKeys: []}}',
  ];
  for (const yaml of rows) assert.deepEqual(problemsOf(yaml), [], yaml);
});

test('every unbuilt key is reported at once, with the other problems', () => {
  const problems = problemsOf('dns:\n  port: 70000\nbgp:\n  enabled: true\n  nodePrefixes: [192.0.2.0/24]\n');
  assert.ok(problems.some((p) => /dns\.port = 70000/.test(p)));
  assert.ok(problems.some((p) => /bgp\.nodePrefixes = \["192\.0\.2\.0\/24"\]: BGP is not built yet/.test(p)));
  assert.ok(problems.some((p) => /bgp\.enabled = true: BGP is not built yet/.test(p)));
});

test('built features are accepted: backups, the license keys and the dashboard folder, in the file and from the environment', () => {
  for (const yaml of ['backup: {enabled: true, dir: /var/backups/gslbd, interval: 2h, keep: 3}', 'license: {secret: file-secret-1, licenseKey: file-key-2}', 'api: {webuiPath: /srv/gslb-ui}']) {
    assert.deepEqual(problemsOf(yaml), [], yaml);
  }
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-unbuilt-'));
  try {
    const file = join(dir, 'c.yaml');
    writeFileSync(file, 'node: {id: n1}\nlicense: {secret: file-secret-1, licenseKey: file-key-2}\n');
    const c = loadConfig(file, { GSLB_LICENSE_SECRET: 'env-secret-3', GSLB_LICENSE_KEY: 'env-key-4' });
    assert.deepEqual(c.license, { secret: 'env-secret-3', licenseKey: 'env-key-4' });
    // an empty variable is unset: the file's value stays
    assert.deepEqual(loadConfig(file, { GSLB_LICENSE_SECRET: '', GSLB_LICENSE_KEY: '' }).license, { secret: 'file-secret-1', licenseKey: 'file-key-2' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an unbuilt key with an environment variable is refused, naming the variable and not the value', () => {
  const row: UnbuiltKey = { path: ['x', 'token'], feature: 'the x feature is', isSet: () => false, env: 'GSLB_X_TOKEN' };
  const rows: { env: NodeJS.ProcessEnv; want: RegExp[] }[] = [
    { env: {}, want: [] },
    { env: { GSLB_X_TOKEN: '' }, want: [] },
    { env: { GSLB_X_TOKEN: 'env-token-5' }, want: [/^GSLB_X_TOKEN \(environment\): x\.token = "\[redacted\]": the x feature is not built yet; unset GSLB_X_TOKEN$/] },
  ];
  for (const r of rows) {
    const problems = checkUnbuiltEnv(r.env, [row]);
    assert.equal(problems.length, r.want.length, JSON.stringify(r.env));
    r.want.forEach((w, i) => assert.match(problems[i]!, w));
    assert.ok(!problems.join('\n').includes('env-token-5'));
  }
  // the real table: no variable of a built feature is refused
  assert.deepEqual(checkUnbuiltEnv({ GSLB_LICENSE_SECRET: 'env-secret-3', GSLB_LICENSE_KEY: 'env-key-4' }), []);
});

test('zone transfer keys are built: accepted when valid, checked when not, secrets never quoted', () => {
  const secret = 'c2VjcmV0LXRzaWctMTYtYnl0ZXM=';
  const rows: { name: string; yaml: string; want: RegExp[] }[] = [
    { name: 'enabled with keys', yaml: `dns:\n  domain: example.test\n  axfr:\n    enabled: true\n    requireTsig: true\n    tsigKeys: [{name: xfr.example.test, algorithm: hmac-sha512, secret: ${secret}}]`, want: [] },
    { name: 'enabled without keys', yaml: 'dns:\n  axfr:\n    enabled: true', want: [] },
    { name: 'requireTsig without keys', yaml: 'dns:\n  axfr:\n    requireTsig: true', want: [/dns\.axfr\.requireTsig = true: needs at least one key in dns\.axfr\.tsigKeys/] },
    { name: 'secret not base64', yaml: 'dns:\n  axfr:\n    tsigKeys: [{name: k1, secret: "not base64!"}]', want: [/dns\.axfr\.tsigKeys\.0\.secret = "\[redacted\]": must be a non-empty base64 string/] },
    { name: 'same key name twice', yaml: `dns:\n  axfr:\n    tsigKeys: [{name: k1, secret: ${secret}}, {name: K1., secret: ${secret}}]`, want: [/dns\.axfr\.tsigKeys\.1\.name = "K1\.": is already the name of dns\.axfr\.tsigKeys\[0\]/] },
  ];
  for (const row of rows) {
    const problems = problemsOf(`node: {id: n1}\n${row.yaml}\n`);
    assert.equal(problems.length, row.want.length, `${row.name}: ${problems.join('\n')}`);
    row.want.forEach((w, i) => assert.match(problems[i]!, w, row.name));
    assert.ok(!problems.join('\n').includes(secret) && !problems.join('\n').includes('not base64!'), `${row.name}: no secret quoted`);
  }
});
