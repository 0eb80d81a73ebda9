// test-timeout: 1500000
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childEnv } from '../helpers/proc.js';

const ROOT = join(import.meta.dirname, '../..');

/** What the package is built from: everything `npm pack` reads, without dist/ or native build output. */
const SOURCES = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'README.md', 'BENCHMARKS.md', 'LICENSE',
  'bin', 'core', 'gitops', 'cli', 'runtime', 'schemas', 'webui', 'native', 'examples', 'docs'];

/** Process groups still running (killed when the test ends, whatever happened). */
const live = new Set<number>();

/**
 * Runs a command in its own process group and resolves with its output; on a non-zero exit or
 * after `timeout` ms (then the whole group is killed: npm starts compilers) it throws with both.
 */
function sh(cmd: string, args: string[], cwd: string, timeout: number): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { cwd, env: childEnv({ NO_COLOR: '1', npm_config_update_notifier: 'false' }), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => { stdout += d; });
    p.stderr.on('data', (d) => { stderr += d; });
    live.add(p.pid!);
    const timer = setTimeout(() => { try { process.kill(-p.pid!, 'SIGKILL'); } catch { /* gone */ } }, timeout);
    p.on('error', (err) => { clearTimeout(timer); live.delete(p.pid!); reject(err); });
    p.on('close', (code, signal) => {
      clearTimeout(timer);
      live.delete(p.pid!);
      if (code === 0) resolve({ stdout, stderr });
      else reject(new Error(`${cmd} ${args.join(' ')} in ${cwd}: ${signal ? `killed (${signal}, limit ${timeout} ms)` : `exit ${code}`}\n${stdout.slice(-4000)}\n${stderr.slice(-4000)}`));
    });
  });
}

/**
 * The package as a user gets it: `npm pack` (its prepare script builds dist/) from a clean copy of
 * the sources, so the shared dist/ of a working tree plays no part; then `npm install <tarball>` in
 * an empty project, which runs the install script (node-gyp builds the two addons from the shipped
 * sources), and the installed binaries run. Slow (dependencies with native code compile): the
 * file has its own generous timeout (the header line, read by tests/run.mjs).
 */
test('the packed tarball installs, and its gslbd and gslbctl run', async (t) => {
  const work = mkdtempSync(join(tmpdir(), 'gslbd-pack-'));
  t.after(() => {
    for (const pid of live) try { process.kill(-pid, 'SIGKILL'); } catch { /* gone */ }
    rmSync(work, { recursive: true, force: true });
  });
  const stage = join(work, 'stage');
  for (const p of SOURCES) {
    if (!existsSync(join(ROOT, p))) continue;
    cpSync(join(ROOT, p), join(stage, p), { recursive: true, filter: (src) => !/[\\/]native[\\/][^\\/]+[\\/]build([\\/]|$)/.test(src) });
  }
  // the repo's own dependencies build the stage (typescript for prepare); none of them is packed
  symlinkSync(join(ROOT, 'node_modules'), join(stage, 'node_modules'), 'dir');

  const packed = await sh('npm', ['pack', '--json', '--pack-destination', work], stage, 5 * 60_000);
  const info = (JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[])[0]!;
  const files = info.files.map((f) => f.path);
  for (const want of ['bin/gslbd.mjs', 'bin/gslbctl.mjs', 'dist/runtime/main.js', 'dist/cli/main.js', 'schemas/config.v1.schema.json',
    'native/tcp-probe/binding.gyp', 'native/tcp-probe/tcp_probe.c', 'native/udp-batch/binding.gyp', 'native/udp-batch/udp_batch.c',
    'examples/config.yaml', 'examples/config-repo/services/www.yaml', 'docs/gitops.md', 'README.md', 'package.json',
    'webui/index.html', 'webui/js/main.js']) {
    assert.ok(files.includes(want), `${want} is packed`);
  }
  const unwanted = files.filter((f) => /^(tests|tsconfig|controller|runtime)\b|\/build\/|\.ts$|node_modules/.test(f) && !f.endsWith('.d.ts'));
  assert.deepEqual(unwanted, [], 'no tests, fixtures, TypeScript sources or build output in the tarball');

  const app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), '{"name": "gslbd-package-test", "private": true}\n');
  await sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(work, info.filename)], app, 15 * 60_000);
  const installed = join(app, 'node_modules', 'gslbd');
  for (const addon of ['native/tcp-probe/build/Release/tcp_probe.node', 'native/udp-batch/build/Release/udp_batch.node']) {
    assert.ok(existsSync(join(installed, addon)), `the install script built ${addon}`);
  }

  const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
  const v = await sh('npx', ['--no-install', 'gslbd', '--version'], app, 60_000);
  assert.equal(v.stdout.trim(), `gslbd ${version} (node ${process.versions.node})`);
  const ok = await sh('npx', ['--no-install', 'gslbctl', 'validate', join(installed, 'examples', 'config-repo')], app, 60_000);
  assert.match(ok.stdout, /: valid \(\d+ files, \d+ manifests/);
});
