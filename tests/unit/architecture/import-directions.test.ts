import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { featureOf, importGraph, reachable, roleOf, type Edge } from './import-graph.js';

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
