// test-timeout: 300000
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { freePort, runEntry } from '../helpers/proc.js';

const EXAMPLE = join(import.meta.dirname, '../../examples/config-repo');

/**
 * gslbctl's exit codes, the same scheme for every command (docs/cli.md): 0 ok, 1 findings, 2 usage
 * or input error, 3 daemon unreachable. Each row runs the real entry point in a child process.
 */
describe('gslbctl exit codes (table, real process)', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'gslbctl-codes-'));
  let d: TestDaemon;
  let keyed: TestDaemon;
  let closed = '';
  before(async () => {
    cpSync(EXAMPLE, join(tmp, 'bad'), { recursive: true });
    writeFileSync(join(tmp, 'bad/services/broken.yaml'), 'apiVersion: gslb/v2\nkind: Service\nmetadata: {name: x}\nspec: {domain: x.example.test., pool: eu-west}\n');
    mkdirSync(join(tmp, 'syntax'));
    writeFileSync(join(tmp, 'syntax/x.yaml'), 'kind: [\n');
    writeFileSync(join(tmp, 'good.yaml'), 'dns: {port: 5353}\n');
    writeFileSync(join(tmp, 'invalid.yaml'), 'dns: {port: 70000}\n');
    writeFileSync(join(tmp, 'db.sqlite'), '');
    writeFileSync(join(tmp, 'restore.yaml'), `database: {path: ${join(tmp, 'restored.db')}}\n`);
    closed = `http://127.0.0.1:${await freePort()}`;
    d = await startTestDaemon();
    keyed = await startTestDaemon({}, { GSLB_API_KEY: 'right-key-0123456789' });
  });
  after(async () => {
    await d?.stop();
    await keyed?.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  const rows: { name: string; args: () => string[]; env?: NodeJS.ProcessEnv; code: number; out?: RegExp; err?: RegExp }[] = [
    // 0: the answer is yes
    { name: 'help', args: () => ['--help'], code: 0, out: /exit codes:\n {2}0 .*\n {2}1 .*\n {2}2 .*\n {2}3 +daemon unreachable/ },
    { name: 'version', args: () => ['--version'], code: 0, out: /^gslbctl \d+\.\d+\.\d+ \(node \d+\.\d+\.\d+\)\n$/ },
    { name: 'command help', args: () => ['validate', '--help'], code: 0, out: /usage: gslbctl validate/ },
    { name: 'valid manifest folder', args: () => ['validate', EXAMPLE], code: 0, out: /: valid \(/ },
    { name: 'valid config file', args: () => ['validate', '--config', join(tmp, 'good.yaml')], code: 0, out: /good\.yaml: valid/ },
    { name: 'valid folder, --format json', args: () => ['validate', EXAMPLE, '--format', 'json'], code: 0, out: /^\[\]\n$/ },
    { name: 'completion bash', args: () => ['completion', 'bash'], code: 0, out: /complete -o filenames -F _gslbctl gslbctl/ },
    { name: 'history of a daemon', args: () => ['history', '--server', d.url], code: 0, out: /no revision applied yet/ },
    { name: 'backup of a daemon', args: () => ['backup', '--server', d.url], code: 0, out: /^backup gslbd-\d{8}T\d{6}\.db \(\d+ bytes\) written to \S+ at / },
    { name: 'license of a daemon', args: () => ['license', 'show', '--server', d.url], code: 0, out: /^Status: +none .*\nTier: +free\n/ },
    // 1: findings
    { name: 'invalid manifests', args: () => ['validate', join(tmp, 'bad')], code: 1, out: /bad\/services\/broken\.yaml:1:13: apiVersion: expected "gslb\/v1", got "gslb\/v2" \(api-version\)/ },
    { name: 'a YAML syntax error is a finding too', args: () => ['validate', join(tmp, 'syntax')], code: 1, out: /x\.yaml:\d+:\d+: YAML syntax error: .* \(yaml-syntax\)\n$/ },
    { name: 'invalid config file', args: () => ['validate', '--config', join(tmp, 'invalid.yaml')], code: 1, out: /invalid\.yaml:1:\d+: dns\.port = 70000: must be <= 65535 \(range\)/ },
    { name: 'changes found (diff against a daemon)', args: () => ['diff', EXAMPLE, '--server', d.url], code: 1, out: /\+\+\+ git\/pool\/eu-west/ },
    { name: 'not ready (no repo configured)', args: () => ['status', '--server', d.url], code: 1, out: /Ready: +False \(NotConfigured\)/ },
    // 2: usage or input errors
    { name: 'no command', args: () => [], code: 2, err: /usage: gslbctl/ },
    { name: 'unknown command', args: () => ['frobnicate'], code: 2, err: /unknown command "frobnicate"/ },
    { name: 'unknown flag', args: () => ['validate', '--bogus'], code: 2, err: /unknown flag --bogus/ },
    { name: 'flag without its value', args: () => ['validate', '--config'], code: 2, err: /needs a value/ },
    { name: 'bad --format', args: () => ['validate', EXAMPLE, '--format', 'xml'], code: 2, err: /--format xml: must be text or json/ },
    { name: 'bad -o', args: () => ['status', '-o', 'yaml'], code: 2, err: /-o yaml/ },
    { name: 'missing folder', args: () => ['validate', join(tmp, 'nope')], code: 2, err: /nope: no such directory/ },
    { name: 'a file where a folder is expected', args: () => ['validate', join(tmp, 'good.yaml')], code: 2, err: /not a directory/ },
    { name: 'missing config file', args: () => ['validate', '--config', join(tmp, 'nope.yaml')], code: 2, err: /cannot read the configuration file \(ENOENT\)/ },
    { name: 'invalid --config for a folder', args: () => ['validate', EXAMPLE, '--config', join(tmp, 'invalid.yaml')], code: 2, err: /--config .*invalid\.yaml: .*dns\.port/ },
    { name: 'diff of manifests that do not validate', args: () => ['diff', join(tmp, 'bad'), '--server', d.url], code: 2, err: /invalid \(\d+ problems? in \d+ files?\)/ },
    { name: 'diff of a missing folder', args: () => ['diff', join(tmp, 'nope'), '--server', d.url], code: 2, err: /no such directory/ },
    { name: 'diff against a file that is no database', args: () => ['diff', EXAMPLE, '--db', join(tmp, 'good.yaml')], code: 2, err: /gslbctl diff: / },
    { name: 'apply without --dry-run', args: () => ['apply', EXAMPLE], code: 2, err: /only --dry-run/ },
    { name: 'explain without a name', args: () => ['explain'], code: 2, err: /usage: explain NAME/ },
    { name: 'restore without a file', args: () => ['restore'], code: 2, err: /usage: restore FILE/ },
    { name: 'restore with a config that cannot be read', args: () => ['restore', join(tmp, 'db.sqlite'), '--config', join(tmp, 'nope.yaml')], code: 2, err: /--config .*nope\.yaml: .*cannot read the configuration file/ },
    { name: 'restore of a file that is no database', args: () => ['restore', join(tmp, 'good.yaml'), '--config', join(tmp, 'restore.yaml')], code: 2, err: /refused, nothing changed: .*good\.yaml is not a readable SQLite database/ },
    { name: 'license without a subcommand', args: () => ['license'], code: 2, err: /usage: license issue/ },
    { name: 'completion for an unknown shell', args: () => ['completion', 'fish'], code: 2, err: /bash or zsh/ },
    { name: 'a server URL that is no URL', args: () => ['status', '--server', 'not a url'], code: 2, err: /not an http or https URL/ },
    { name: 'a key the daemon refuses (401)', args: () => ['status', '--server', keyed.url], env: { GSLB_API_KEY: 'wrong-key' }, code: 2, err: /HTTP 401/ },
    // 3: the daemon is unreachable
    { name: 'status, nothing listening', args: () => ['status', '--server', closed], code: 3, err: /cannot reach http:\/\/127\.0\.0\.1:\d+/ },
    { name: 'diff, nothing listening', args: () => ['diff', EXAMPLE, '--server', closed], code: 3, err: /cannot reach/ },
    { name: 'reconcile, nothing listening', args: () => ['reconcile', '--server', closed], code: 3, err: /cannot reach/ },
    { name: 'backup, nothing listening', args: () => ['backup', '--server', closed], code: 3, err: /cannot reach/ },
    { name: 'license show, nothing listening', args: () => ['license', 'show', '--server', closed], code: 3, err: /cannot reach/ },
  ];

  for (const r of rows) {
    it(`${r.code}: ${r.name}`, async () => {
      const res = await runEntry('gslbctl', r.args(), { NO_COLOR: '1', GSLB_API_KEY: '', GSLB_SERVER: closed, ...r.env });
      assert.equal(res.code, r.code, `stdout: ${res.stdout}\nstderr: ${res.stderr}`);
      if (r.out) assert.match(res.stdout, r.out);
      if (r.err) assert.match(res.stderr, r.err);
    });
  }
});
