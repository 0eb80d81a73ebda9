import type { FastifyInstance } from 'fastify';
import type { Core } from '../app.js';
import { apiRef, errorResponses } from '../api/schemas.js';
import { bgpStatus } from './status.js';

/**
 * `GET /api/v1/bgp` (permission `cluster:read`: BGP is server-wide, like the cluster routes;
 * docs/bgp.md "Status"): the speaker's settings, every peer with its session state, uptime, last
 * error and the prefixes it holds from us, and each pool prefix entry with its verdict.
 */
export function bgpRoutes(core: Core) {
  return async (app: FastifyInstance) => {
    app.get('/bgp', {
      config: { permission: 'cluster:read' },
      schema: { operationId: 'getBgpStatus', summary: 'BGP sessions and announcements', tags: ['bgp'], response: { 200: { description: 'the speaker as this node runs it', ...apiRef('bgp', 'BgpStatus') }, ...errorResponses() } },
    }, async () => bgpStatus(core.config.bgp, core.ports.bgp));
  };
}
