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
  { key: 'dns.axfr.enabled', yaml: 'dns:\n  axfr:\n    enabled: true', want: /^config\.yaml:4: dns\.axfr\.enabled = true: zone transfers \(AXFR\) are not built yet; remove the key or set it to false/ },
  { key: 'dns.axfr.requireTsig', yaml: 'dns:\n  axfr:\n    requireTsig: true', want: /^config\.yaml:4: dns\.axfr\.requireTsig = true: zone transfers \(AXFR\) are not built yet; remove the key or set it to false/ },
  { key: 'dns.axfr.tsigKeys', yaml: 'dns:\n  axfr:\n    tsigKeys: [{name: xfr.example.test, secret: c2VjcmV0LXRzaWc=}]', want: /^config\.yaml:4: dns\.axfr\.tsigKeys = \[\{"name":"xfr\.example\.test".*: zone transfers \(AXFR\) are not built yet; remove the key or leave it empty/ },
];
const SECRETS = ['peer-pw', 'c2VjcmV0LXRzaWc='];

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
  const problems = problemsOf('dns:\n  port: 70000\n  axfr:\n    enabled: true\nbgp:\n  enabled: true\n');
  assert.ok(problems.some((p) => /dns\.port = 70000/.test(p)));
  assert.ok(problems.some((p) => /dns\.axfr\.enabled = true: zone transfers \(AXFR\) are not built yet/.test(p)));
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
