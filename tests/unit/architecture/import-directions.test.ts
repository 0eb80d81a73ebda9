import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { featureOf, importGraph, reachable, roleOf, type Edge } from './import-graph.js';
import { featureCrossings, fileCycles, kernelLeaks, kitLeaks, layerOf, libraryLeaks, unitCycles, unitOf } from './layers.js';

// The rules of docs/architecture.md "Folders and import directions", checked on the real tree.
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const graph = importGraph(ROOT, ['core', 'gitops', 'cli', 'runtime']);
const edges: Edge[] = [...graph.values()].flat();
const local = (e: Edge) => graph.has(e.to);
const show = (list: Edge[]) => list.map((e) => `${e.from} → ${e.to}`).join('\n');

test('the import graph is read: every feature folder has modules and imports', () => {
  assert.ok(graph.size > 150, `only ${graph.size} modules found`);
  for (const f of ['runtime/dns/part.ts', 'runtime/dns/routes.ts', 'runtime/api/server.ts', 'gitops/part.ts']) assert.ok(graph.has(f), f);
  assert.ok(edges.some((e) => e.from === 'runtime/dns/routes.ts' && e.to === 'runtime/dns/answer.ts'));
  assert.ok(edges.some((e) => e.to === 'fastify'), 'package imports are recorded');
});

test('feature logic imports no REST module, no part and no composition root', () => {
  const bad = edges.filter((e) => local(e) && roleOf(e.from) === 'logic' && roleOf(e.to) !== 'logic');
  assert.equal(show(bad), '');
});

test('the HTTP kit in runtime/api imports no feature routes, parts or composition roots', () => {
  const bad = edges.filter((e) => local(e) && roleOf(e.from) === 'api' && !['api', 'logic'].includes(roleOf(e.to)));
  assert.equal(show(bad), '');
});

test('routes belong to their feature: no routes module imports a part or another feature\'s routes', () => {
  const bad = edges.filter((e) => local(e) && roleOf(e.from) === 'routes'
    && (roleOf(e.to) === 'wiring' || roleOf(e.to) === 'root' || (roleOf(e.to) === 'routes' && featureOf(e.to) !== featureOf(e.from))));
  assert.equal(show(bad), '');
});

test('a part wires its own feature: no part imports another feature\'s part or routes', () => {
  const bad = edges.filter((e) => local(e) && roleOf(e.from) === 'wiring'
    && ((roleOf(e.to) === 'wiring' || roleOf(e.to) === 'routes') && featureOf(e.to) !== featureOf(e.from)));
  assert.equal(show(bad), '');
});

test('the DNS answer path reaches neither the REST layer, fastify nor git', () => {
  const dns = [...graph.keys()].filter((f) => f.startsWith('runtime/dns/') && !['runtime/dns/part.ts', 'runtime/dns/routes.ts'].includes(f));
  assert.ok(dns.includes('runtime/dns/answer.ts') && dns.includes('runtime/dns/server.ts'));
  const banned = (m: string) => m.startsWith('runtime/api/') || m === 'fastify' || m.startsWith('@fastify/') || m === 'isomorphic-git' || m.startsWith('gitops/source/');
  const found: string[] = [];
  for (const f of dns) {
    for (const [m, via] of reachable(graph, f)) if (banned(m)) found.push(via.join(' → '));
  }
  assert.deepEqual(found, []);
});

test('the checks above fail on a violating edge', () => {
  assert.equal(roleOf('runtime/dns/answer.ts'), 'logic');
  assert.equal(roleOf('runtime/dns/routes.ts'), 'routes');
  assert.equal(roleOf('runtime/auth/routes/users.ts'), 'routes');
  assert.equal(roleOf('runtime/api/server.ts'), 'api');
  assert.equal(roleOf('runtime/dns/part.ts'), 'wiring');
  assert.equal(featureOf('core/plan/plan.ts'), 'core/plan');
  const g = new Map<string, Edge[]>([
    ['runtime/dns/answer.ts', [{ from: 'runtime/dns/answer.ts', to: 'runtime/x.ts', typeOnly: true }]],
    ['runtime/x.ts', [{ from: 'runtime/x.ts', to: 'fastify', typeOnly: false }]],
  ]);
  assert.deepEqual(reachable(g, 'runtime/dns/answer.ts').get('fastify'), ['runtime/dns/answer.ts', 'runtime/x.ts', 'fastify']);
});

// The layers (tests/unit/architecture/layers.ts, docs/architecture.md "Folders and import directions").
const all = importGraph(ROOT, ['core', 'gitops', 'cli', 'runtime']);

test('no import cycle between files (type-only imports count), and none between folders once the roots are left out', () => {
  assert.deepEqual(fileCycles(all), []);
  assert.deepEqual(unitCycles(all), []);
});

test('the kernel (core/) imports only itself and shared libraries; shared libraries import no feature', () => {
  assert.equal(show(kernelLeaks(all)), '');
  assert.equal(show(libraryLeaks(all)), '');
  assert.equal(show(kitLeaks(all)), '');
});

test("a feature imports another feature only through that feature's port.ts, and no composition root", () => {
  assert.equal(show(featureCrossings(all)), '');
});

test('each layer rule fails on a synthetic graph that breaks it', () => {
  const g = (...pairs: [string, string][]) => {
    const m = new Map<string, Edge[]>();
    for (const [a, b] of pairs) {
      if (!m.has(a)) m.set(a, []);
      if (!m.has(b)) m.set(b, []);
      m.get(a)!.push({ from: a, to: b, typeOnly: true });
    }
    return m;
  };
  assert.deepEqual(fileCycles(g(['runtime/dns/a.ts', 'runtime/dns/b.ts'], ['runtime/dns/b.ts', 'runtime/dns/a.ts'])), [['runtime/dns/a.ts', 'runtime/dns/b.ts']]);
  assert.deepEqual(fileCycles(g(['runtime/dns/a.ts', 'runtime/dns/b.ts'])), []);
  assert.deepEqual(unitCycles(g(['runtime/dns/a.ts', 'runtime/txt/port.ts'], ['runtime/txt/b.ts', 'runtime/dns/port.ts'])), [['runtime/dns', 'runtime/txt']]);
  assert.deepEqual(unitCycles(g(['runtime/parts-all.ts', 'runtime/dns/part.ts'], ['runtime/dns/part.ts', 'runtime/app.ts'])), [], 'roots are left out');
  assert.equal(kernelLeaks(g(['core/apply/apply.ts', 'runtime/txt/record.ts'])).length, 1);
  assert.equal(kernelLeaks(g(['core/apply/apply.ts', 'runtime/errors.ts'])).length, 0);
  assert.equal(libraryLeaks(g(['runtime/config/load.ts', 'runtime/dns/tsig.ts'])).length, 1);
  assert.equal(libraryLeaks(g(['runtime/config/load.ts', 'core/model/types.ts'])).length, 0);
  assert.equal(kitLeaks(g(['runtime/app.ts', 'runtime/health/scheduler.ts'])).length, 1);
  assert.equal(kitLeaks(g(['runtime/app.ts', 'runtime/ports/health-view.ts'])).length, 0);
  assert.equal(featureCrossings(g(['runtime/dns/zone-index.ts', 'runtime/txt/record.ts'])).length, 1);
  assert.equal(featureCrossings(g(['runtime/dns/zone-index.ts', 'runtime/txt/port.ts'])).length, 0);
  assert.equal(featureCrossings(g(['gitops/replay/replay.ts', 'runtime/dns/answer.ts'])).length, 1);
  assert.equal(featureCrossings(g(['runtime/dns/part.ts', 'runtime/parts-all.ts'])).length, 1);
  assert.equal(featureCrossings(g(['runtime/dns/answer.ts', 'runtime/dns/zone-index.ts'])).length, 0);
  assert.equal(layerOf('gitops/offload/worker-main.ts'), 'root');
  assert.equal(layerOf('runtime/ports/mail.ts'), 'kit');
  assert.equal(unitOf('gitops/canary/gate.ts'), 'gitops');
});
