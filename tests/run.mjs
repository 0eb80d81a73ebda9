#!/usr/bin/env node
// Test entry point: finds tests/unit/**/*.test.ts and tests/integration/**/*.test.ts (or the paths
// given as arguments) and runs them with Node's built-in test runner, TypeScript loaded by tsx.
// `npm test` typechecks first (package.json), so a type error fails fast.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function collect(dir, out) {
  let entries;
  try { entries = readdirSync(dir); } catch { return out; }
  for (const name of entries.sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) collect(p, out);
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const args = process.argv.slice(2);
const roots = args.length ? args : ['tests/unit', 'tests/integration'];
const files = roots.flatMap((r) => (r.endsWith('.ts') ? [r] : collect(r, [])));
if (files.length === 0) { console.error('no test files found'); process.exit(1); }

// The runner's --test-timeout bounds every test and every file as a whole. A file whose tests are
// slow by nature (packing and installing the package, building an image) says so in its first
// lines with `// test-timeout: <ms>` and runs in its own pass with that bound.
const DEFAULT_TIMEOUT = 120000;
const groups = new Map();
for (const f of files) {
  const m = /^\/\/ test-timeout: (\d+)$/m.exec(readFileSync(f, 'utf8').split('\n').slice(0, 5).join('\n'));
  const timeout = m ? Number(m[1]) : DEFAULT_TIMEOUT;
  groups.set(timeout, [...(groups.get(timeout) ?? []), f]);
}
// Each pass also writes its report to a file. The failures of every pass are printed again at the
// very end, so the last lines of a long run say what failed and why, whichever pass it was in.
const reports = mkdtempSync(join(tmpdir(), 'gslbd-tests-'));
let status = 0;
const failures = [];
for (const [timeout, group] of [...groups].sort((a, b) => a[0] - b[0])) {
  const report = join(reports, `${timeout}.txt`);
  const res = spawnSync(process.execPath, [
    '--import', 'tsx', '--test',
    '--test-reporter=spec', '--test-reporter-destination=stdout',
    '--test-reporter=spec', `--test-reporter-destination=${report}`,
    `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 2}`,
    `--test-timeout=${timeout}`, ...group,
  ], { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } });
  if (res.status !== 0) {
    status = res.status ?? 1;
    let text = '';
    try { text = readFileSync(report, 'utf8'); } catch { /* the pass died before it wrote a report */ }
    const at = text.lastIndexOf('failing tests:');
    failures.push(at >= 0 ? text.slice(at + 'failing tests:'.length).trim() : `the pass with --test-timeout=${timeout} ended with status ${res.status ?? res.signal} and reported no failing test`);
  }
}
rmSync(reports, { recursive: true, force: true });
if (failures.length) console.log(`\n✖ failing tests on Node ${process.version}, every pass:\n\n${failures.join('\n\n')}`);
process.exit(status);
