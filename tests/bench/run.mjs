#!/usr/bin/env node
// `npm run bench`: runs every benchmark script in tests/bench/ that exists, one after another.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
const names = ['api', 'dns', 'answer-path', 'health', 'gitops', 'forms', 'rum', 'axfr', 'dnssec', 'reconcile', 'import-steps', 'health-board', 'index-image', 'ui', 'balancer', 'cluster'];
// the scripts that need flags of their own, and those whose file is not named after the script
const FLAGS = { rum: ['--expose-gc'], health: ['--expose-gc'], 'index-image': ['--expose-gc'] };
const FILES = { reconcile: 'reconcile-100k', 'import-steps': 'apply-micro' };
let failed = 0;
for (const n of names) {
  const file = `tests/bench/${FILES[n] ?? n}.ts`;
  if (!existsSync(file)) continue;
  console.log(`\n=== bench:${n}`);
  const r = spawnSync(process.execPath, [...(FLAGS[n] ?? []), '--import', 'tsx', file], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
