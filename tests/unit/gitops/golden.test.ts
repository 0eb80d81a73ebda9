import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { emptySnapshot, nextSnapshot } from '../../../core/snapshot/snapshot.js';
import type { Row } from '../../../core/model/types.js';
import { dryRun } from '../../../gitops/dry-run.js';
import '../../../runtime/kinds-all.js';
import { planToJson, renderPlanText } from '../../../core/plan/render.js';
import { readManifestDir } from '../../../cli/manifest-dir.js';

/**
 * Golden plans: tests/golden/<case>/{desired/, actual.json, plan.json, plan.txt} (and optional
 * options.json with `safety`). The plan of desired/ against the rows of actual.json must equal the
 * files byte for byte. `UPDATE_GOLDEN=1` rewrites them; review the diff before committing.
 */
const ROOT = join(import.meta.dirname, '../../golden');
const update = process.env.UPDATE_GOLDEN === '1';

for (const name of readdirSync(ROOT).sort()) {
  const dir = join(ROOT, name);
  if (!existsSync(join(dir, 'desired'))) continue;
  test(`golden plan: ${name}`, () => {
    const rows = JSON.parse(readFileSync(join(dir, 'actual.json'), 'utf8')) as Row[];
    const actual = nextSnapshot(emptySnapshot(), rows.map((row) => ({ op: 'put', row })), '', 0);
    const opts = existsSync(join(dir, 'options.json')) ? JSON.parse(readFileSync(join(dir, 'options.json'), 'utf8')) : {};
    const r = dryRun(readManifestDir(join(dir, 'desired')), actual, { revision: '0123456789abcdef0123456789abcdef01234567', ...opts });
    assert.deepEqual(r.problems, [], 'golden desired/ must be valid');
    const json = `${JSON.stringify(planToJson(r.plan!), null, 2)}\n`;
    const text = renderPlanText(r.plan!);
    if (update) {
      writeFileSync(join(dir, 'plan.json'), json);
      writeFileSync(join(dir, 'plan.txt'), text);
      return;
    }
    assert.equal(json, readFileSync(join(dir, 'plan.json'), 'utf8'), `${name}/plan.json differs (UPDATE_GOLDEN=1 rewrites it)`);
    assert.equal(text, readFileSync(join(dir, 'plan.txt'), 'utf8'), `${name}/plan.txt differs (UPDATE_GOLDEN=1 rewrites it)`);
  });
}
