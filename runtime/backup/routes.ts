import type { FastifyPluginAsync } from 'fastify';
import { apiRef, errorResponses } from '../api/schemas.js';
import type { BackupResult } from './backup.js';

/**
 * `POST /system/backup` under /api/v1: takes a backup now, into `backup.dir` (whether or not the
 * schedule is on), and answers 201 `{file, dir, size, createdAt}` once the file is complete.
 * Permission `backups:write`, server-wide (docs/backup.md): the system key, dev mode and a
 * `tenant_admin` of the operator tenant. A failed backup is a 500 `{error}` naming the cause.
 */
export function backupRoutes(take: () => Promise<BackupResult>): FastifyPluginAsync {
  return async (app) => {
    app.post('/system/backup', {
      config: { permission: 'backups:write' },
      schema: {
        operationId: 'createBackup', summary: 'Take a database backup now', tags: ['system'],
        response: { 201: { description: 'the backup file, complete', ...apiRef('backup', 'Backup') }, ...errorResponses(500) },
      },
    }, async (_req, reply) => {
      const r = await take();
      return reply.status(201).send({ file: r.file, dir: r.dir, size: r.size, createdAt: Math.floor(r.createdAt / 1000) });
    });
  };
}
