import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, parseConfigText } from '../../../runtime/config/load.js';
import { UNBUILT_KEYS } from '../../../runtime/config/unbuilt.js';
import { ValidationError } from '../../../runtime/errors.js';

/** One row per key of UNBUILT_KEYS: the key set in a file (on line 3) and the problem it must give. */
const ROWS: { key: string; yaml: string; want: RegExp }[] = [
  { key: 'backup.enabled', yaml: 'backup:\n  enabled: true', want: /^config\.yaml:3: backup\.enabled = true: backups are not built yet; remove the key or set it to false/ },
  { key: 'redirect.enabled', yaml: 'redirect:\n  enabled: true\n  port: 8081', want: /^config\.yaml:3: redirect\.enabled = true: the HTTP redirect listener is not built yet; remove the key or set it to false/ },
  { key: 'dns.axfr.enabled', yaml: 'dns:\n  axfr:\n    enabled: true', want: /^config\.yaml:4: dns\.axfr\.enabled = true: zone transfers \(AXFR\) are not built yet; remove the key or set it to false/ },
  { key: 'dns.axfr.requireTsig', yaml: 'dns:\n  axfr:\n    requireTsig: true', want: /^config\.yaml:4: dns\.axfr\.requireTsig = true: zone transfers \(AXFR\) are not built yet; remove the key or set it to false/ },
  { key: 'dns.axfr.tsigKeys', yaml: 'dns:\n  axfr:\n    tsigKeys: [{name: xfr.example.test, secret: c2VjcmV0LXRzaWc=}]', want: /^config\.yaml:4: dns\.axfr\.tsigKeys = \[\{"name":"xfr\.example\.test".*: zone transfers \(AXFR\) are not built yet; remove the key or leave it empty/ },
  { key: 'license.secret', yaml: 'license:\n  secret: file-secret-1', want: /^config\.yaml:3: license\.secret = "\[redacted\]": licensing is not built yet; remove the key$/ },
  { key: 'license.licenseKey', yaml: 'license:\n  licenseKey: file-key-2', want: /^config\.yaml:3: license\.licenseKey = "\[redacted\]": licensing is not built yet; remove the key$/ },
  { key: 'api.webuiPath', yaml: 'api:\n  webuiPath: /srv/gslb-ui', want: /^config\.yaml:3: api\.webuiPath = "\/srv\/gslb-ui": the web dashboard is not built yet; remove the key$/ },
];
const SECRETS = ['c2VjcmV0LXRzaWc=', 'file-secret-1', 'file-key-2'];

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
    'backup: {enabled: false, dir: /var/backups/gslbd, interval: 2h, keep: 3}',
    'redirect: {enabled: false, listenAddr: 127.0.0.1}',
    'dns: {axfr: {enabled: false, requireTsig: false, tsigKeys: []}}',
    'license: {}',
    'license: {secret: "", licenseKey: ""}',
    'api: {webuiPath: ""}',
  ];
  for (const yaml of rows) assert.deepEqual(problemsOf(yaml), [], yaml);
});

test('every unbuilt key is reported at once, with the other problems', () => {
  const problems = problemsOf('dns:\n  port: 70000\nbackup:\n  enabled: true\napi:\n  webuiPath: /srv/ui\n');
  assert.ok(problems.some((p) => /dns\.port = 70000/.test(p)));
  assert.ok(problems.some((p) => /backup\.enabled = true: backups are not built yet/.test(p)));
  assert.ok(problems.some((p) => /api\.webuiPath = "\/srv\/ui": the web dashboard is not built yet/.test(p)));
});

test('license keys from the environment are refused, naming the variable and not the value', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-unbuilt-'));
  try {
    const file = join(dir, 'c.yaml');
    writeFileSync(file, 'node: {id: n1}\n');
    const rows: { env: NodeJS.ProcessEnv; want: RegExp[] }[] = [
      { env: {}, want: [] },
      { env: { GSLB_LICENSE_SECRET: '' }, want: [] },
      { env: { GSLB_LICENSE_SECRET: 'env-secret-3' }, want: [/^GSLB_LICENSE_SECRET \(environment\): license\.secret = "\[redacted\]": licensing is not built yet; unset GSLB_LICENSE_SECRET$/] },
      { env: { GSLB_LICENSE_KEY: 'env-key-4' }, want: [/^GSLB_LICENSE_KEY \(environment\): license\.licenseKey = "\[redacted\]": licensing is not built yet; unset GSLB_LICENSE_KEY$/] },
      { env: { GSLB_LICENSE_SECRET: 'env-secret-3', GSLB_LICENSE_KEY: 'env-key-4' }, want: [/^GSLB_LICENSE_SECRET/, /^GSLB_LICENSE_KEY/] },
    ];
    for (const row of rows) {
      let problems: string[] = [];
      try { loadConfig(file, row.env); } catch (err) { assert.ok(err instanceof ValidationError); problems = err.problems; }
      assert.equal(problems.length, row.want.length, JSON.stringify(row.env));
      row.want.forEach((w, i) => assert.match(problems[i]!, w));
      assert.ok(!problems.join('\n').includes('env-secret-3') && !problems.join('\n').includes('env-key-4'));
    }
    // a bad file and a variable: both listed, the file's first
    writeFileSync(file, 'backup:\n  enabled: true\n');
    let problems: string[] = [];
    try { loadConfig(file, { GSLB_LICENSE_KEY: 'env-key-4' }); } catch (err) { problems = (err as ValidationError).problems; }
    assert.equal(problems.length, 2, problems.join('\n'));
    assert.match(problems[0]!, /c\.yaml:2: backup\.enabled = true/);
    assert.match(problems[1]!, /^GSLB_LICENSE_KEY \(environment\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
