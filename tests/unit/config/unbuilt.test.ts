import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, parseConfigText } from '../../../runtime/config/load.js';
import { UNBUILT_KEYS, checkUnbuilt, checkUnbuiltEnv, type UnbuiltKey } from '../../../runtime/config/unbuilt.js';
import { ValidationError } from '../../../runtime/errors.js';

const REDACTED = '[redacted]';

/**
 * A table of its own (every key of the real one is built: UNBUILT_KEYS is empty), on real keys, so
 * the mechanism stays honest for the next key that is specified before its feature.
 */
const TABLE: readonly UnbuiltKey[] = [
  { path: ['bgp', 'enabled'], feature: 'the x feature is', isSet: (c) => c.bgp.enabled },
  { path: ['bgp', 'peers'], feature: 'the x feature is', isSet: (c) => c.bgp.peers.length > 0, shown: (c) => c.bgp.peers.map(({ password: _secret, ...p }) => p) },
  { path: ['license', 'secret'], feature: 'the y feature is', isSet: (c) => Boolean(c.license.secret), shown: () => REDACTED },
];

function problemsOf(yaml: string): string[] {
  try {
    parseConfigText(yaml, 'config.yaml');
  } catch (err) {
    assert.ok(err instanceof ValidationError, String(err));
    return err.problems;
  }
  return [];
}

/** The config a text gives (valid: the real table refuses nothing). */
const configOf = (yaml: string) => parseConfigText(yaml, 'config.yaml');

test('every key the schema specifies is built: the real table is empty and refuses nothing', () => {
  assert.deepEqual(UNBUILT_KEYS, []);
  assert.deepEqual(problemsOf('bgp: {enabled: true, localASN: 65000, routerID: 192.0.2.1}\nredirect: {enabled: true, port: 8081}\nbackup: {enabled: true, dir: /tmp/b}\napi: {webuiPath: /srv/ui}\n'), []);
});

test('a set key of an unbuilt feature is reported with the value (secrets left out) and the remedy; defaults pass', () => {
  const rows: { name: string; yaml: string; want: { path: string[]; value: unknown; rule: string }[] }[] = [
    { name: 'nothing set', yaml: 'node: {id: n1}', want: [] },
    { name: 'defaults spelled out', yaml: 'bgp: {enabled: false, peers: []}', want: [] },
    { name: 'a switch', yaml: 'bgp: {enabled: true, localASN: 65000, routerID: 192.0.2.1}', want: [{ path: ['bgp', 'enabled'], value: true, rule: 'the x feature is not built yet; remove the key or set it to false' }] },
    {
      name: 'a list, shown without its secrets', yaml: 'bgp:\n  peers: [{remoteASN: 65001, remoteAddr: 192.0.2.2}]',
      want: [{ path: ['bgp', 'peers'], value: [{ remoteASN: 65001, remoteAddr: '192.0.2.2', remotePort: 179 }], rule: 'the x feature is not built yet; remove the key or leave it empty' }],
    },
    { name: 'a string', yaml: 'license: {secret: file-secret-1}', want: [{ path: ['license', 'secret'], value: REDACTED, rule: 'the y feature is not built yet; remove the key' }] },
  ];
  for (const r of rows) assert.deepEqual(checkUnbuilt(configOf(r.yaml), TABLE), r.want, r.name);
  const both = checkUnbuilt(configOf('bgp: {enabled: true, localASN: 65000, routerID: 192.0.2.1}\nlicense: {secret: file-secret-1}'), TABLE);
  assert.deepEqual(both.map((p) => p.path.join('.')), ['bgp.enabled', 'license.secret'], 'every one, in table order');
  assert.ok(!JSON.stringify(both).includes('file-secret-1'));
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
    // whom a key transfers for (docs/dns.md "Who gets which records"): one tenant per key
    { name: 'the operator\'s key, granted to the operator tenant', yaml: `dns:\n  axfr:\n    tsigKeys: [{name: ops, secret: ${secret}, tenant: system}]\n  update:\n    grants: [{key: ops, tenant: default}]`, want: [] },
    { name: 'a tenant\'s key with its own grant', yaml: `dns:\n  axfr:\n    tsigKeys: [{name: ka, secret: ${secret}, tenant: a}]\n  update:\n    grants: [{key: ka, tenant: a}]`, want: [] },
    { name: 'a key of one tenant granted to another', yaml: `dns:\n  axfr:\n    tsigKeys: [{name: ka, secret: ${secret}, tenant: a}]\n  update:\n    grants: [{key: ka, tenant: b}]`, want: [/dns\.update\.grants\.0\.tenant = "b": must be the tenant of key ka \(a\)/] },
    { name: 'one key granted to two tenants', yaml: `dns:\n  axfr:\n    tsigKeys: [{name: k, secret: ${secret}}]\n  update:\n    grants: [{key: k, tenant: a}, {key: k, tenant: b}]`, want: [/dns\.update\.grants\.1\.tenant = "b": key k already acts for tenant a/] },
    // NOTIFY targets (docs/dns.md "NOTIFY"): an IP address and port, a configured key, transfers on
    { name: 'notify targets', yaml: `dns:\n  axfr:\n    enabled: true\n    tsigKeys: [{name: xfr, secret: ${secret}, tenant: system}]\n    notify: [{address: "192.0.2.53:53", key: XFR.}, {address: "[2001:db8::53]:5353"}]\n    notifyTimeout: 250ms`, want: [] },
    { name: 'notify with an unknown key', yaml: 'dns:\n  axfr:\n    enabled: true\n    notify: [{address: "192.0.2.53:53", key: nokey}]', want: [/dns\.axfr\.notify\.0\.key = "nokey": must be the name of a key in dns\.axfr\.tsigKeys/] },
    { name: 'notify to a bad address', yaml: 'dns:\n  axfr:\n    enabled: true\n    notify: [{address: "999.0.2.53:53"}, {address: "192.0.2.53:70000"}, {address: "[192.0.2.1]:53"}]', want: [/notify\.0\.address = "999\.0\.2\.53:53": must be ip:port/, /notify\.1\.address/, /notify\.2\.address/] },
    { name: 'notify without transfers', yaml: 'dns:\n  axfr:\n    notify: [{address: "192.0.2.53:53"}]', want: [/dns\.axfr\.notify = .*needs dns\.axfr\.enabled/] },
    { name: 'notifyTimeout out of range', yaml: 'dns:\n  axfr:\n    notifyTimeout: 10ms', want: [/dns\.axfr\.notifyTimeout = "10ms": must be between 100ms and 60s/] },
  ];
  for (const row of rows) {
    const problems = problemsOf(`node: {id: n1}\n${row.yaml}\n`);
    assert.equal(problems.length, row.want.length, `${row.name}: ${problems.join('\n')}`);
    row.want.forEach((w, i) => assert.match(problems[i]!, w, row.name));
    assert.ok(!problems.join('\n').includes(secret) && !problems.join('\n').includes('not base64!'), `${row.name}: no secret quoted`);
  }
});
