import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { FuzzReport } from '../fuzz/run-fuzz.js';
import { PACKAGE_ROOT } from '../../runtime/paths.js';

// The fast, deterministic subset of `npm run test:api-fuzz` (docs/api.md "Fuzzing the document"):
// 3 requests per operation, fixed seed, in the script's own network namespace.

test('api fuzz: 3 schema-valid requests per operation get no 5xx, no undocumented status or media type, no response-schema violation', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-fuzz-'));
  try {
    const out = join(dir, 'report.json');
    const run = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'tests/fuzz/api-fuzz.ts', '--per-op', '3', '--seed', '7', '--json', out, '--quiet'], { cwd: PACKAGE_ROOT, maxBuffer: 16 << 20 })
      .catch((err: { stdout?: string; stderr?: string; code?: number }) => err);
    // no report: the script could not run (no network namespace of its own, a daemon that did not start)
    assert.ok(existsSync(out), `the fuzz wrote no report:\n${run.stdout ?? ''}\n${run.stderr ?? ''}`);
    const report = JSON.parse(readFileSync(out, 'utf8')) as FuzzReport;
    t.diagnostic(run.stdout ?? '');
    assert.ok(report.operations >= 100, `${report.operations} operations`);
    assert.ok(report.requests >= report.operations * 2, `${report.requests} requests sent`);
    assert.deepEqual(report.violations, [], 'violations');
    assert.equal(report.serverErrors, 0);
    assert.equal(report.undocumentedStatus, 0);
    assert.equal(report.mediaTypeViolations, 0);
    assert.equal(report.schemaViolations, 0);
    assert.equal(report.timeouts, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
