import type { FastifyPluginAsync } from 'fastify';
import type { Logger } from '../log/logger.js';
import { notFound } from '../errors.js';
import type { DemoBackend } from './backend.js';
import { apiRef, errorResponses } from '../api/schemas.js';
import type { DemoBackendParams } from './route-types.js';

/**
 * `POST /demo/backends/{name}/stop` and `…/start` under /api/v1: stop or start one demo backend so
 * a health check sees it fail or recover (docs/demo.md). Permission `demo:write`, which no role
 * holds: dev mode and the system key only. 200 with `{name, address, running}` (idempotent: stopping
 * a stopped backend is a 200 too); 404 `{error}` for an unknown name; a start that cannot listen
 * again (the address was taken meanwhile) is a 500 `{error}`.
 */
export function demoRoutes(backends: readonly DemoBackend[], log: Logger): FastifyPluginAsync {
  return async (app) => {
    app.post<{ Params: DemoBackendParams }>('/demo/backends/:name/:action', {
      config: { permission: 'demo:write' },
      schema: {
        operationId: 'setDemoBackend', summary: 'Stop or start a demo backend', tags: ['demo'], params: apiRef('demo', 'DemoBackendParams'),
        response: { 200: { description: 'the backend after the action (idempotent)', ...apiRef('demo', 'DemoBackendState') }, ...errorResponses(400, 404, 500) },
      },
    }, async (req) => {
      const { name, action } = req.params;
      const b = backends.find((x) => x.name === name);
      if (!b) throw notFound(`no demo backend named ${JSON.stringify(name)}; there are ${backends.map((x) => x.name).join(', ')}`);
      const was = b.running;
      if (action === 'stop') await b.stop();
      else await b.start();
      if (was !== b.running) log.info({ backend: b.name, address: b.address, running: b.running }, `demo backend ${action === 'stop' ? 'stopped' : 'started'}`);
      return b.state();
    });
  };
}
