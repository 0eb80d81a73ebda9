import type { FastifyPluginAsync } from 'fastify';
import { apiRef, errorResponses } from '../api/schemas.js';
import type { LicenseState } from './license.js';

/**
 * `GET /license` under /api/v1: the license in force, `{status, tier, licensedTier, licensee,
 * expiresAt, reason}` (never the token). Permission `license:read`, server-wide: every role of the
 * operator tenant, the system key and dev mode (docs/license.md).
 */
export function licenseRoutes(current: () => LicenseState): FastifyPluginAsync {
  return async (app) => {
    app.get('/license', {
      config: { permission: 'license:read' },
      schema: {
        operationId: 'getLicense', summary: 'The license in force', tags: ['system'],
        response: { 200: { description: 'the license as evaluated now', ...apiRef('license', 'License') }, ...errorResponses() },
      },
    }, async () => current());
  };
}
