import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../../cli/main.js';
import { renderExplain } from '../../../cli/gitops-commands.js';
import { openDatabase } from '../../../runtime/store/db.js';
import { ResourceStore } from '../../../core/store/resources.js';
import { emptySnapshot } from '../../../core/snapshot/snapshot.js';
import { dryRun } from '../../../gitops/dry-run.js';
import { readManifestDir } from '../../../cli/manifest-dir.js';

const EXAMPLE = join(import.meta.dirname, '../../../examples/config-repo');
const tmp = mkdtempSync(join(tmpdir(), 'gslbctl-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** Runs gslbctl in-process with stdout and stderr captured. */
async function ctl(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const w1 = process.stdout.write.bind(process.stdout);
  const w2 = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((c: string) => { out += c; return true; }) as typeof process.stdout.write;
  process.stderr.write = ((c: string) => { err += c; return true; }) as typeof process.stderr.write;
  try {
    const code = await main(args);
    return { code, out, err };
  } finally {
    process.stdout.write = w1;
    process.stderr.write = w2;
  }
}

test('validate DIR: the example repo is valid; a broken copy lists every problem with file:line', async () => {
  const ok = await ctl('validate', EXAMPLE);
  assert.equal(ok.code, 0, ok.out + ok.err);
  assert.match(ok.out, /valid \(5 files, 6 manifests/);
  const bad = join(tmp, 'bad');
  cpSync(EXAMPLE, bad, { recursive: true });
  writeFileSync(join(bad, 'services/broken.yaml'), 'apiVersion: gslb/v1\nkind: Service\nmetadata: {name: www}\nspec:\n  domain: no-trailing-dot\n  pool: eu-west\n');
  const r = await ctl('validate', bad, '-o', 'json');
  assert.equal(r.code, 1);
  const body = JSON.parse(r.out) as { valid: boolean; problems: string[] };
  assert.equal(body.valid, false);
  // the bad domain, and the name clash: broken.yaml sorts first, so www.yaml's "www" is the duplicate;
  // paths start with the folder as given, so each line opens from where gslbctl ran
  assert.deepEqual(body.problems.map((p) => p.split(': ')[0]), [`${bad}/services/broken.yaml:5:11`, `${bad}/services/www.yaml:6:9`]);
});

test('diff DIR --db FILE: 0 when the database matches, 1 with changes (unified diff), 2 for invalid manifests', async () => {
  const dbFile = join(tmp, 'gslbd.db');
  const db = openDatabase(dbFile);
  const plan = dryRun(readManifestDir(EXAMPLE), emptySnapshot(), { revision: 'c'.repeat(40) }).plan!;
  const store = new ResourceStore(db);
  store.transaction(() => store.writePlan(plan, 1));
  db.close();
  const same = await ctl('diff', EXAMPLE, '--db', dbFile);
  assert.equal(same.code, 0, same.out + same.err);
  assert.match(same.out, /No changes\./);
  const changed = join(tmp, 'changed');
  cpSync(EXAMPLE, changed, { recursive: true });
  writeFileSync(join(changed, 'services/global.yaml'), 'apiVersion: gslb/v1\nkind: Service\nmetadata: {name: app}\nspec: {domain: app.example.test., pool: global-web, algorithm: map-file, ttl: 45, chain: [latency]}\n');
  const d = await ctl('diff', changed, '--db', dbFile);
  assert.equal(d.code, 1);
  assert.match(d.out, /--- live\/service\/app\n\+\+\+ git\/service\/app\t\(services\/global\.yaml\)\n@@ update service "app" @@/);
  assert.match(d.out, /-ttl: 30\n\+ttl: 45/);
  const dry = await ctl('apply', changed, '--dry-run', '--db', dbFile);
  assert.equal(dry.code, 0);
  assert.match(dry.out, /dry run: nothing applied/);
  mkdirSync(join(tmp, 'invalid'));
  writeFileSync(join(tmp, 'invalid/x.yaml'), 'kind: [\n');
  assert.equal((await ctl('diff', join(tmp, 'invalid'), '--db', dbFile)).code, 2);
});

test('apply without --dry-run is refused: the repo is the source of truth', async () => {
  const r = await ctl('apply', EXAMPLE);
  assert.equal(r.code, 2);
  assert.match(r.err, /only --dry-run/);
});

test('explain renders a simulate answer step by step', () => {
  const text = renderExplain({
    name: 'www.example.test.', type: 'A', clientIp: '10.10.1.1', ecsSubnet: null, rcode: 'NOERROR', ecsScope: null,
    steps: [{ step: 'failover', input: ['192.0.2.10', '192.0.2.11'], output: ['192.0.2.10'], reason: 'lowest priority healthy member' }],
    answers: [{ name: 'www.example.test.', type: 'A', ttl: 30, data: '192.0.2.10' }],
  });
  assert.equal(text, [
    'www.example.test. A asked by 10.10.1.1',
    '  1. failover: 192.0.2.10, 192.0.2.11 -> 192.0.2.10',
    '     lowest priority healthy member',
    'Answer: NOERROR',
    '  www.example.test. 30 A 192.0.2.10',
  ].join('\n'));
});
