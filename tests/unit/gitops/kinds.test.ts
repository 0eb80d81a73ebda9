import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KINDS } from '../../../runtime/kinds-all.js';
import { KindRegistry } from '../../../gitops/kinds/registry.js';
import { API_VERSION, type ResourceKind } from '../../../runtime/ports/kinds.js';
import { loadManifests } from '../../../gitops/load/index.js';
import { checkAgainstActual, validateManifests } from '../../../gitops/validate/validate.js';
import { kindInfo } from '../../../core/model/kinds.js';
import { emptySnapshot } from '../../../core/snapshot/snapshot.js';
import { readManifestDir } from '../../../cli/manifest-dir.js';
import { importGraph } from '../architecture/import-graph.js';

// Resource kinds (docs/gitops.md "Resource kinds"): each declared in its feature, listed in runtime/kinds-all.ts.
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const load = (files: Record<string, string>) => loadManifests(Object.entries(files).map(([p, text]) => ({ path: p, text }))).manifests;

test('every built-in kind declares its apiVersion, schema, row kinds and routes, and they exist', () => {
  assert.deepEqual(KINDS.names(), ['AlertTarget', 'ApiKey', 'Form', 'Pool', 'Redirect', 'RoutingTest', 'Service', 'TxtRecord']);
  for (const k of KINDS.all()) {
    assert.equal(k.apiVersion, API_VERSION, k.kind);
    for (const f of [k.schema, ...(k.schemaRefs ?? [])]) assert.ok(existsSync(path.join(ROOT, 'schemas', f)), `${k.kind}: schemas/${f}`);
    for (const r of k.rows) assert.equal(kindInfo(r).kind, r, `${k.kind}: row kind ${r} is registered`);
    if (k.routes) assert.ok(existsSync(path.join(ROOT, k.routes)), `${k.kind}: ${k.routes}`);
    for (const r of k.rows) assert.equal(KINDS.ofRow(r), k, `${k.kind} owns row kind ${r}`);
  }
});

test('a kind maps manifests only to the row kinds it declares (the golden repos)', () => {
  let seen = 0;
  for (const dir of ['create-from-empty', 'update-and-prune']) {
    const files = readManifestDir(path.join(ROOT, 'tests/golden', dir, 'desired'));
    const { manifests } = loadManifests(files);
    for (const m of manifests) {
      const k = KINDS.get(m.kind)!;
      for (const row of k.map(m)) { seen++; assert.ok(k.rows.includes(row.kind), `${m.kind} → ${row.kind}`); }
    }
  }
  assert.ok(seen > 0);
});

test('the validator runs the registry it is given: a new kind needs no change in gitops/', () => {
  const note: ResourceKind = {
    kind: 'Note', apiVersion: API_VERSION, schema: 'manifest.v1.schema.json', rows: ['pool'],
    map: (m) => [{ kind: 'pool', key: `note-${m.name}`, fields: { name: m.name } }],
    check: (m, _i, _e, report) => { if (m.name === 'bad') report(['metadata', 'name'], 'not this one'); },
  };
  const own = new KindRegistry([note]);
  const ms = load({ 'n.yaml': 'apiVersion: gslb/v1\nkind: Note\nmetadata: {name: hello}\nspec: {}\n---\napiVersion: gslb/v1\nkind: Note\nmetadata: {name: bad}\nspec: {}\n', 'p.yaml': 'apiVersion: gslb/v1\nkind: Pool\nmetadata: {name: eu}\nspec: {}\n' });
  const v = validateManifests(ms, {}, own);
  assert.deepEqual(v.problems, [
    'n.yaml:8:18: metadata.name = "bad": not this one (semantic)',
    'p.yaml:2:7: kind = "Pool": unknown kind; known kinds: Note (unknown-kind)',
  ]);
  assert.deepEqual(v.desired.map((d) => d.key), ['note-hello', 'note-bad']);
  assert.deepEqual(validateManifests(ms, {}, KINDS).problems, ['n.yaml:2:7: kind = "Note": unknown kind; known kinds: AlertTarget, ApiKey, Form, Pool, Redirect, RoutingTest, Service, TxtRecord (unknown-kind)', 'n.yaml:7:7: kind = "Note": unknown kind; known kinds: AlertTarget, ApiKey, Form, Pool, Redirect, RoutingTest, Service, TxtRecord (unknown-kind)']);
  assert.deepEqual(checkAgainstActual(v.desired, emptySnapshot(), {}, own), []);
});

test('gitops/load and gitops/validate name no feature; a kind.ts imports only the kernel, shared libraries, its folder and the kind port', () => {
  const graph = importGraph(ROOT, ['core', 'gitops', 'cli', 'runtime']);
  const shared = /^runtime\/(errors|paths|args|worker-thread|ports|shutdown|listen-error|cli-flags)\.ts$|^runtime\/(log|net|crypto|config|store|tenancy|geo|balancer|ports)\//;
  const local = (to: string) => graph.has(to);
  const bad: string[] = [];
  for (const [from, edges] of graph) {
    if (from.startsWith('gitops/load/') || from.startsWith('gitops/validate/') || from.startsWith('gitops/kinds/')) {
      for (const e of edges) if (local(e.to) && e.to.startsWith('runtime/') && !shared.test(e.to)) bad.push(`${from} → ${e.to}`);
    }
    if (path.basename(from) === 'kind.ts' && from !== 'core/model/kinds.ts') {
      const own = path.dirname(from) + '/';
      for (const e of edges) {
        if (!local(e.to) || e.to.startsWith('core/') || shared.test(e.to) || e.to.startsWith(own) || e.to === 'runtime/ports/kinds.ts') continue;
        bad.push(`${from} → ${e.to}`);
      }
    }
  }
  assert.equal(bad.join('\n'), '');
  const kindFiles = [...graph.keys()].filter((f) => path.basename(f) === 'kind.ts');
  assert.deepEqual(kindFiles.sort(), ['gitops/routing/kind.ts', 'runtime/alerts/kind.ts', 'runtime/forms/kind.ts', 'runtime/redirect/kind.ts', 'runtime/resources/kind.ts', 'runtime/txt/kind.ts']);
});
