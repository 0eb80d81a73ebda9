#!/usr/bin/env node
// Test entry point: finds tests/unit/**/*.test.ts and tests/integration/**/*.test.ts (or the paths
// given as arguments) and runs them with Node's built-in test runner, TypeScript loaded by tsx.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
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
const res = spawnSync(process.execPath, [
  '--import', 'tsx', '--test', '--test-reporter=spec',
  `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 2}`,
  '--test-timeout=120000', ...files,
], { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } });
process.exit(res.status ?? 1);
