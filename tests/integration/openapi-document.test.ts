import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestDaemon } from '../helpers/daemon.js';
import { lintOpenApi } from '../helpers/openapi-lint.js';

const demo = { demo: { backends: [{ name: 'demo-1', host: '127.0.0.1', port: 0 }] } };

test('openapi document: the served document is valid for swagger-parser and has no spectral:oas error', async (t) => {
  // the demo backends too, so the demo routes are in the document
  const d = await startTestDaemon({}, {}, { ports: demo });
  try {
    const res = await fetch(`${d.url}/api/v1/openapi.json`);
    assert.equal(res.status, 200);
    const text = await res.text();
    const doc = JSON.parse(text) as { openapi: string; paths: Record<string, unknown> };
    assert.equal(doc.openapi, '3.0.3');
    assert.ok(doc.paths['/api/v1/demo/backends/{name}/{action}'], 'the demo routes are documented');
    const report = await lintOpenApi(text);
    assert.deepEqual(report.parserErrors, [], 'swagger-parser validate');
    assert.deepEqual(report.spectralErrors, [], 'spectral:oas errors');
    const warnings = Object.values(report.spectralWarnings).reduce((a, b) => a + b, 0);
    t.diagnostic(`spectral:oas warnings: ${warnings} ${JSON.stringify(report.spectralWarnings)}`);
    console.log(`spectral:oas: 0 errors, ${warnings} warnings ${JSON.stringify(report.spectralWarnings)}`);
  } finally {
    await d.stop();
  }
});

test('openapi document: no schema has an empty required list', async () => {
  const d = await startTestDaemon();
  try {
    const text = await (await fetch(`${d.url}/api/v1/openapi.json`)).text();
    assert.doesNotMatch(text, /"required":\[\]/);
    const doc = JSON.parse(text) as { components: { schemas: Record<string, { required?: unknown; properties?: object }> } };
    // the schema file keeps its empty list (valid JSON Schema); the document drops it
    assert.ok(doc.components.schemas['api-ws-WsQuery']?.properties);
    assert.equal(doc.components.schemas['api-ws-WsQuery']?.required, undefined);
  } finally {
    await d.stop();
  }
});
