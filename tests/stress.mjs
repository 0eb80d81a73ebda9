#!/usr/bin/env node
// `npm run test:stress [-- <files or globs>] [--runs N] [--burners K]`: runs test files N times
// (default 5) through tests/run.mjs while K child processes (default 2) keep the CPUs busy, as a
// loaded CI machine would, and prints how often each file failed, which tests failed, and the time
// taken. Without files it runs every tests/integration/cluster-*, ui-* and gitops-* file. Exits 1
// when any run failed. The burners are killed at the end, on Ctrl-C and on any exit
// (docs/testing.md "Stress runs").
import { spawn } from 'node:child_process';
import { existsSync, globSync } from 'node:fs';
import { relative, resolve } from 'node:path';

const DEFAULT_GLOBS = ['tests/integration/cluster-*.test.ts', 'tests/integration/ui-*.test.ts', 'tests/integration/gitops-*.test.ts'];

function parseArgs(argv) {
  const o = { runs: 5, burners: 2, patterns: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = (name) => {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < 0) { console.error(`${name} takes a whole number, not ${argv[i]}`); process.exit(2); }
      return v;
    };
    if (a === '--runs') o.runs = Math.max(1, num('--runs'));
    else if (a === '--burners') o.burners = num('--burners');
    else if (a === '--help' || a === '-h') { console.log('usage: npm run test:stress -- [files or globs] [--runs N] [--burners K]'); process.exit(0); }
    else o.patterns.push(a);
  }
  return o;
}

/** A file's path as this report names it: relative to the working directory (the runner's own form). */
const shortPath = (f) => relative(process.cwd(), resolve(f));

/** The test files the patterns name, in order, each once. */
function filesOf(patterns) {
  const out = [];
  for (const p of patterns.length ? patterns : DEFAULT_GLOBS) {
    const found = /[*?[{]/.test(p) ? globSync(p).sort() : existsSync(p) ? [p] : [];
    if (found.length === 0) { console.error(`no test file matches ${p}`); process.exit(2); }
    for (const f of found.map(shortPath)) if (!out.includes(f)) out.push(f);
  }
  return out;
}

/**
 * The failing tests of one run, read from the end of tests/run.mjs's output: after "failing tests"
 * the node test runner names each failure as `test at <file>:<line>:<col>` and then `✖ <name>`;
 * a pass that died without naming any is reported by run.mjs as such.
 */
function failuresOf(output) {
  const at = output.lastIndexOf('failing tests on Node');
  if (at < 0) return [];
  const lines = output.slice(at).split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^test at (.+?):\d+:\d+$/.exec(lines[i].trim());
    if (m) {
      const name = /^✖ (.*?)(?: \([\d.]+ms\))?$/.exec((lines[i + 1] ?? '').trim())?.[1] ?? '(unnamed)';
      out.push({ file: shortPath(m[1]), name });
    } else if (/reported no failing test/.test(lines[i])) {
      out.push({ file: '(a whole pass)', name: lines[i].trim() });
    }
  }
  return out;
}

/** K processes that each spin one CPU until killed. */
function startBurners(k) {
  return Array.from({ length: k }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
}

const opts = parseArgs(process.argv.slice(2));
const files = filesOf(opts.patterns);
const burners = startBurners(opts.burners);
let current;
const stopAll = () => {
  for (const b of burners) if (b.exitCode === null && b.signalCode === null) b.kill('SIGKILL');
  // the run's own process group: tests/run.mjs and the test runner under it
  if (current && current.exitCode === null) { try { process.kill(-current.pid, 'SIGTERM'); } catch { /* gone */ } }
};
process.on('exit', stopAll);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => { stopAll(); process.exit(130); });

/** One run of tests/run.mjs over the files, its output shown as it comes and kept. */
function runOnce() {
  return new Promise((resolve) => {
    let output = '';
    current = spawn(process.execPath, ['tests/run.mjs', ...files], {
      env: { ...process.env, TEST_CONCURRENCY: process.env.TEST_CONCURRENCY ?? '2' },
      stdio: ['ignore', 'pipe', 'pipe'], detached: true,
    });
    const keep = (d) => { output += d; if (process.env.STRESS_VERBOSE) process.stdout.write(d); };
    current.stdout.on('data', keep);
    current.stderr.on('data', keep);
    current.on('close', (code, signal) => resolve({ code, signal, output }));
  });
}

console.log(`stress: ${files.length} files, ${opts.runs} runs, ${opts.burners} CPU burners, TEST_CONCURRENCY=${process.env.TEST_CONCURRENCY ?? 2}`);
for (const f of files) console.log(`  ${f}`);
const t0 = Date.now();
const perFile = new Map(files.map((f) => [f, { runs: 0, tests: new Map() }]));
let failedRuns = 0;
for (let run = 1; run <= opts.runs; run++) {
  const r0 = Date.now();
  const { code, signal, output } = await runOnce();
  const summary = /^(\d+ passed, \d+ failed.*)$/m.exec(output.slice(-2000))?.[1] ?? `no summary (status ${code ?? signal})`;
  const fails = failuresOf(output);
  if (code !== 0 && fails.length === 0) fails.push({ file: '(a whole pass)', name: `tests/run.mjs ended with status ${code ?? signal}` });
  if (fails.length) failedRuns++;
  const filesHit = new Set();
  for (const f of fails) {
    const e = perFile.get(f.file) ?? { runs: 0, tests: new Map() };
    perFile.set(f.file, e);
    e.tests.set(f.name, (e.tests.get(f.name) ?? 0) + 1);
    if (!filesHit.has(f.file)) { filesHit.add(f.file); e.runs++; }
  }
  console.log(`run ${run}/${opts.runs}: ${summary} in ${((Date.now() - r0) / 1000).toFixed(0)} s${fails.length ? `; failed: ${[...filesHit].join(', ')}` : ''}`);
}
stopAll();

console.log(`\nfailures per file over ${opts.runs} runs (${opts.burners} CPU burners):`);
for (const [file, e] of perFile) {
  console.log(`  ${String(e.runs).padStart(3)}/${opts.runs}  ${file}`);
  for (const [name, n] of e.tests) console.log(`         ${n}x ${name}`);
}
console.log(`\ntotal time ${((Date.now() - t0) / 1000).toFixed(0)} s; ${failedRuns} of ${opts.runs} runs had a failure`);
process.exit(failedRuns ? 1 : 0);
