import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { api, startTestDaemon } from '../helpers/daemon.js';
import type { Part } from '../../runtime/parts.js';

const counter = { type: 'object', additionalProperties: false, required: ['n'], properties: { n: { type: 'integer' } } };

/** Test-only routes: one answering as documented, three answering what the document does not say. */
const probePart: Part = {
  name: 'openapi-probe',
  setup: (_core, ext) => {
    ext.apiPlugins.push(async (app: FastifyInstance) => {
      const schema: FastifySchema = { tags: ['test'], response: { 200: counter } };
      app.get('/probe/valid', { config: { public: true }, schema }, async () => ({ n: 1 }));
      // a pre-serialised body is sent as it is, so a wrong one reaches the client
      app.get('/probe/wrong-body', { config: { public: true }, schema }, async (_req, reply) =>
        reply.header('content-type', 'application/json; charset=utf-8').send('{"n":"one"}'));
      app.get('/probe/wrong-status', { config: { public: true }, schema }, async (_req, reply) => reply.status(418).send({ error: 'teapot' }));
      app.get('/probe/no-schema', { config: { public: true }, schema: { tags: ['test'] } }, async () => ({ n: 1 }));
    });
  },
};

test('openapi check: a body that breaks its schema, an undocumented status and an undocumented body fail stop(); a valid response does not', async () => {
  const d = await startTestDaemon({}, {}, { parts: [probePart] });
  let stopped = false;
  try {
    assert.deepEqual((await api(d.url, 'GET', '/api/v1/probe/valid')).body, { n: 1 });
    assert.deepEqual((await api(d.url, 'GET', '/api/v1/probe/wrong-body')).body, { n: 'one' });
    assert.equal((await api(d.url, 'GET', '/api/v1/probe/wrong-status')).status, 418);
    assert.equal((await api(d.url, 'GET', '/api/v1/probe/no-schema')).status, 200);
    assert.equal(d.openapi.checked, 4);
    assert.equal(d.openapi.bodies, 2, 'the valid body and the wrong one were validated');
    const v = d.openapi.violations();
    assert.equal(v.length, 3, v.join('\n'));
    assert.match(v[0]!, /^GET \/api\/v1\/probe\/wrong-body → 200: body\/n must be integer/);
    assert.match(v[1]!, /^GET \/api\/v1\/probe\/wrong-status → 418: status not documented/);
    assert.match(v[2]!, /^GET \/api\/v1\/probe\/no-schema → 200: a application\/json body, but the response documents none/);
    stopped = true;
    await assert.rejects(d.stop(), (err: Error) => {
      assert.match(err.message, /^responses that do not match the OpenAPI document:\n/);
      assert.equal(err.message.split('\n').length, 4);
      assert.doesNotMatch(err.message, /probe\/valid/);
      return true;
    });
  } finally {
    if (!stopped) await d.stop().catch(() => undefined);
  }
});

test('openapi check: documented responses of real routes pass; hidden routes and unrouted 404s are not checked', async () => {
  const d = await startTestDaemon({}, {}, { ports: { demo: { backends: [{ name: 'demo-1', host: '127.0.0.1', port: 0 }] } } });
  try {
    assert.equal((await api(d.url, 'GET', '/api/v1/openapi.json')).status, 200);
    assert.equal((await api(d.url, 'GET', '/api/v1/no-such-route')).status, 404);
    assert.equal(d.openapi.checked, 0, 'the hidden document route and the unrouted 404 are skipped');
    const pool = await api(d.url, 'POST', '/api/v1/pools', { name: 'p' });
    assert.equal(pool.status, 201);
    assert.equal((await api(d.url, 'POST', `/api/v1/pools/${pool.body.id}/members`, { ipAddress: '192.0.2.1', port: 80 })).status, 201);
    assert.equal((await api(d.url, 'PUT', `/api/v1/pools/${pool.body.id}/healthcheck`, { type: 'http', port: 8080 })).status, 200);
    assert.equal((await api(d.url, 'POST', `/api/v1/pools/${pool.body.id}/georules`, { cidr: '10.0.0.0/8', endpoint: '192.0.2.1' })).status, 201);
    assert.equal((await api(d.url, 'POST', '/api/v1/services', { name: 's', domain: 'probe.example.test.', poolId: pool.body.id })).status, 201);
    assert.equal((await api(d.url, 'GET', '/api/v1/snapshot')).status, 200);
    assert.equal((await api(d.url, 'GET', `/api/v1/pools/${pool.body.id}/status`)).status, 200);
    assert.equal((await api(d.url, 'POST', '/api/v1/simulate', { name: 'probe.example.test.', clientIp: '10.1.2.3' })).status, 200);
    assert.equal((await api(d.url, 'GET', '/api/v1/cluster')).status, 200);
    assert.equal((await api(d.url, 'GET', '/api/v1/cluster/health')).status, 200);
    assert.equal((await api(d.url, 'GET', '/api/v1/bgp')).body.enabled, false);
    assert.equal((await api(d.url, 'POST', '/api/v1/demo/backends/demo-1/stop')).body.running, false);
    assert.equal((await api(d.url, 'POST', '/api/v1/demo/backends/demo-1/start')).body.running, true);
    assert.equal((await api(d.url, 'POST', '/api/v1/demo/backends/nope/stop')).status, 404);
    assert.equal((await api(d.url, 'GET', '/api/v1/ws')).status, 401);
    const tok = await api(d.url, 'GET', '/api/v1/ws/token');
    assert.equal((await api(d.url, 'GET', `/api/v1/ws?token=${encodeURIComponent(tok.body.token)}`)).status, 426);
    assert.equal((await api(d.url, 'DELETE', `/api/v1/pools/${pool.body.id}`)).status, 204);
    assert.equal((await api(d.url, 'GET', `/api/v1/pools/${pool.body.id}`)).status, 404);
    assert.equal((await api(d.url, 'POST', '/api/v1/pools', 'x', { 'content-type': 'text/plain' })).status, 415);
    assert.deepEqual(d.openapi.violations(), []);
    assert.equal(d.openapi.checked, 20);
    assert.equal(d.openapi.bodies, 19, 'every response but the 204 had a JSON body that was validated');
  } finally {
    await d.stop();
  }
});
