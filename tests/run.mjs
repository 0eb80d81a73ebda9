#!/usr/bin/env node
// Test entry point. `npm test` runs `tests/run.mjs --all`: the typecheck, ESLint (failing on any
// problem), then tests/unit/**/*.test.ts and tests/integration/**/*.test.ts with Node's built-in test
// runner, TypeScript loaded by tsx. With paths as arguments it runs only those test files (or
// folders). At the end it prints the time each group took and one line `N passed, N failed`.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';

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

const argv = process.argv.slice(2);
const all = argv.includes('--all');
const args = argv.filter((a) => a !== '--all');
const roots = args.length ? args : ['tests/unit', 'tests/integration'];
const files = roots.flatMap((r) => (r.endsWith('.ts') ? [r] : collect(r, [])));
if (files.length === 0) { console.error('no test files found'); process.exit(1); }

// every `node` a test or a script starts is this one (scripts/node chose it: .node/ or the system's)
const env = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` };
const times = [];
let status = 0;
const failures = [];
const counts = { pass: 0, fail: 0, skipped: 0 };
const timed = (name, fn) => {
  const t0 = process.hrtime.bigint();
  const ok = fn();
  times.push({ name, s: Number(process.hrtime.bigint() - t0) / 1e9, ok });
  return ok;
};

// the checks that fail fast: a type error or a lint problem ends the run before the suite
if (all) {
  for (const [name, cmd] of [
    ['typecheck (tsc)', ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--noEmit']],
    ['lint (eslint)', ['node_modules/eslint/bin/eslint.js', '--max-warnings', '0', '.']],
  ]) {
    const ok = timed(name, () => spawnSync(process.execPath, cmd, { stdio: 'inherit', env }).status === 0);
    if (!ok) { printTimes(); console.log(`\n${name} failed on Node ${process.version}`); process.exit(1); }
  }
}

// The runner's --test-timeout bounds every test and every file as a whole. A file whose tests are
// slow by nature (packing and installing the package, building an image) says so in its first
// lines with `// test-timeout: <ms>` and runs in its own pass with that bound. Unit and integration
// files run in separate passes, so the time of each is printed.
const DEFAULT_TIMEOUT = 120000;
const groups = new Map();
for (const f of files) {
  const m = /^\/\/ test-timeout: (\d+)$/m.exec(readFileSync(f, 'utf8').split('\n').slice(0, 5).join('\n'));
  const timeout = m ? Number(m[1]) : DEFAULT_TIMEOUT;
  const kind = f.includes('tests/unit') ? 'unit' : 'integration';
  const key = `${kind} tests${timeout === DEFAULT_TIMEOUT ? '' : ` (timeout ${timeout / 1000} s)`}`;
  const g = groups.get(key) ?? { timeout, kind, files: [] };
  g.files.push(f);
  groups.set(key, g);
}
// Each pass also writes its report to a file. The failures of every pass are printed again at the
// very end, so the last lines of a long run say what failed and why, whichever pass it was in.
// The unit pass runs first and alone. The integration passes run at the same time: the default one
// streams its report to the terminal, each pass of slow files (a few files that mostly wait on
// processes they start) writes to its file, printed when the default pass is done; so the slow files
// add a third file at a time beside the default pass's two instead of running after it.
const reports = mkdtempSync(join(tmpdir(), 'gslbd-tests-'));
const order = [...groups].sort((a, b) => (a[1].kind === b[1].kind ? a[1].timeout - b[1].timeout : a[1].kind === 'unit' ? -1 : 1));
const passArgs = (g, report, toStdout) => [
  '--import', 'tsx', '--test',
  ...(toStdout ? ['--test-reporter=spec', '--test-reporter-destination=stdout'] : ['--test-reporter=spec', `--test-reporter-destination=${report}.log`]),
  '--test-reporter=spec', `--test-reporter-destination=${report}`,
  `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 2}`,
  `--test-timeout=${g.timeout}`, ...g.files,
];
const runPass = (g, report, toStdout) => new Promise((resolve) => {
  const t0 = process.hrtime.bigint();
  const child = spawn(process.execPath, passArgs(g, report, toStdout), { stdio: toStdout ? 'inherit' : 'ignore', env: { ...env, NODE_ENV: 'test' } });
  child.on('exit', (code, signal) => resolve({ status: code, signal, s: Number(process.hrtime.bigint() - t0) / 1e9 }));
});
const finish = (name, g, report, res) => {
  times.push({ name: `${name}, ${g.files.length} files`, s: res.s, ok: res.status === 0 });
  let text = '';
  try { text = readFileSync(report, 'utf8'); } catch { /* the pass died before it wrote a report */ }
  for (const k of Object.keys(counts)) {
    const m = new RegExp(`^ℹ ${k} (\\d+)$`, 'm').exec(text);
    if (m) counts[k] += Number(m[1]);
  }
  if (res.status !== 0) {
    status = res.status ?? 1;
    const at = text.lastIndexOf('failing tests:');
    failures.push(at >= 0 ? text.slice(at + 'failing tests:'.length).trim() : `the pass "${name}" ended with status ${res.status ?? res.signal} and reported no failing test`);
    if (at < 0) counts.fail += 1;
  }
};
const units = order.filter(([, g]) => g.kind === 'unit');
const integration = order.filter(([, g]) => g.kind === 'integration');
for (const [i, [name, g]] of units.entries()) finish(name, g, join(reports, `u${i}.txt`), await runPass(g, join(reports, `u${i}.txt`), true));
const main = integration.find(([, g]) => g.timeout === DEFAULT_TIMEOUT) ?? integration[0];
const others = integration.filter((e) => e !== main);
// the slow files run one after another, beside the default pass
const side = (async () => {
  const out = [];
  for (const [i, [name, g]] of others.entries()) out.push([name, g, join(reports, `s${i}.txt`), await runPass(g, join(reports, `s${i}.txt`), false)]);
  return out;
})();
if (main) finish(main[0], main[1], join(reports, 'main.txt'), await runPass(main[1], join(reports, 'main.txt'), true));
for (const [name, g, report, res] of await side) {
  try { process.stdout.write(`\n--- ${name} (${g.files.map((f) => f.split('/').pop()).join(', ')}) ---\n${readFileSync(`${report}.log`, 'utf8')}`); } catch { /* no log */ }
  finish(name, g, report, res);
}
rmSync(reports, { recursive: true, force: true });
if (failures.length) console.log(`\n✖ failing tests on Node ${process.version}, every pass:\n\n${failures.join('\n\n')}`);
printTimes();
console.log(`\n${counts.pass} passed, ${counts.fail} failed${counts.skipped ? `, ${counts.skipped} skipped` : ''}`);
process.exit(status);

function printTimes() {
  console.log(`\ntime per group (Node ${process.version}):`);
  for (const t of times) console.log(`  ${t.name.padEnd(48)} ${t.s.toFixed(0).padStart(5)} s  ${t.ok ? 'ok' : 'FAILED'}`);
}
