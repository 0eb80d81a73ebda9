import { appendFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { Logger } from '../log/logger.js';

/** One audit entry (gslb-config-auth.md §6). */
export interface AuditEntry {
  time: string;
  method: string;
  path: string;
  actor: string;
  remote: string;
  status: number;
  duration_ms: number;
}

/** Writes audit entries to GSLB_AUDIT_LOG (one JSON line each) or to the main log with `audit: true`. */
export function createAuditSink(file: string | undefined, log: Logger): (e: AuditEntry) => void {
  if (file) {
    return (e) => {
      try {
        appendFileSync(file, `${JSON.stringify(e)}\n`);
      } catch (err) {
        log.error({ err, file }, 'audit log write failed');
      }
    };
  }
  return (e) => log.info({ audit: true, ...e }, 'audit');
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** not an administrative write, so not audited (a visitor's form post, docs/forms.md "Submitting") */
    noAudit?: boolean;
  }
}

/**
 * Audits every POST, PUT, PATCH and DELETE after the response is sent. GET calls and /health are
 * never audited, nor routes that declare `noAudit`. The path is logged without its query string (tokens may travel there).
 */
export function registerAudit(app: FastifyInstance, sink: (e: AuditEntry) => void): void {
  app.addHook('onResponse', async (req, reply) => {
    if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return;
    if (req.routeOptions.config?.noAudit) return;
    const path = req.url.split('?')[0]!;
    if (path === '/api/v1/health') return;
    sink({
      time: new Date().toISOString(),
      method: req.method,
      path,
      actor: req.principal?.actor ?? 'anon',
      remote: req.ip,
      status: reply.statusCode,
      duration_ms: Math.round(reply.elapsedTime * 1000) / 1000,
    });
  });
}
