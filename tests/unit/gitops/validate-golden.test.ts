import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCtl } from '../cli/run-ctl.js';

/**
 * Golden validation output: tests/golden/validate/<case>/{repo/, want.txt, want.json}. `gslbctl
 * validate repo` run from the case folder must print want.txt (text) and want.json (`--format
 * json`) byte for byte and exit 1. `UPDATE_GOLDEN=1` rewrites them; review the diff before committing.
 */
const ROOT = join(import.meta.dirname, '../../golden/validate');
const update = process.env.UPDATE_GOLDEN === '1';
// compiler style: a place, a message, a rule id; nothing else on stdout
const LINE = /^repo\/[\w./-]+\.yaml:\d+:\d+: \S.* \([a-z][a-z-]*\)$/;

for (const name of readdirSync(ROOT).sort()) {
  const dir = join(ROOT, name);
  if (!existsSync(join(dir, 'repo'))) continue;
  test(`golden validate: ${name}`, async () => {
    const text = await runCtl(['validate', 'repo'], dir);
    const json = await runCtl(['validate', 'repo', '--format', 'json'], dir);
    assert.equal(text.code, 1, text.err);
    assert.equal(json.code, 1, json.err);
    const lines = text.out.trimEnd().split('\n');
    for (const l of lines) assert.match(l, LINE);
    assert.deepEqual(lines, [...lines].sort((a, b) => {
      const [fa, la, ca] = a.split(':');
      const [fb, lb, cb] = b.split(':');
      return fa! < fb! ? -1 : fa! > fb! ? 1 : Number(la) - Number(lb) || Number(ca) - Number(cb);
    }), 'sorted by file, line, column');
    const list = JSON.parse(json.out) as { file: string; line: number; col: number; message: string; rule: string }[];
    assert.deepEqual(list.map((p) => `${p.file}:${p.line}:${p.col}: ${p.message} (${p.rule})`), lines, '--format json is the same list');
    assert.match(text.err, /^repo: invalid \(\d+ problems? in \d+ files?\)\n$/);
    if (update) {
      writeFileSync(join(dir, 'want.txt'), text.out);
      writeFileSync(join(dir, 'want.json'), json.out);
      return;
    }
    assert.equal(text.out, readFileSync(join(dir, 'want.txt'), 'utf8'), `${name}/want.txt differs (UPDATE_GOLDEN=1 rewrites it)`);
    assert.equal(json.out, readFileSync(join(dir, 'want.json'), 'utf8'), `${name}/want.json differs (UPDATE_GOLDEN=1 rewrites it)`);
  });
}
