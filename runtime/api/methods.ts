import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyInstance {
    /** the methods some route answers at `path` (a request path, no query), sorted; [] when none does */
    allowedMethods(path: string): string[];
  }
}

/** A route's URL pattern as a regular expression over request paths (`:id` one segment, `*` the rest). */
function patternOf(url: string): RegExp {
  let re = '';
  for (let i = 0; i < url.length; ) {
    const c = url[i]!;
    if (c === ':') {
      // a parameter: its name, then an optional (regex) of its own (fastify's syntax)
      let j = i + 1;
      while (j < url.length && /[\w$]/.test(url[j]!)) j++;
      if (url[j] === '(') {
        const end = url.indexOf(')', j);
        re += `(?:${url.slice(j + 1, end)})`;
        j = end + 1;
      } else re += '[^/]+';
      i = j;
    } else if (c === '*') {
      re += '.*';
      i++;
    } else {
      re += c.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
      i++;
    }
  }
  return new RegExp(`^${re}$`);
}

/**
 * Records every route registered after this call and decorates the server with
 * `allowedMethods(path)`, so a request whose path is routed under other methods can be answered
 * 405 with an `Allow` header (RFC 9110 §15.5.6) instead of 404. Read on errors only, never on a
 * routed request.
 */
export function indexRouteMethods(app: FastifyInstance): void {
  const routes: { pattern: RegExp; methods: string[] }[] = [];
  app.addHook('onRoute', (r) => {
    routes.push({ pattern: patternOf(r.url ?? r.path), methods: Array.isArray(r.method) ? [...r.method] : [r.method] });
  });
  app.decorate('allowedMethods', (path: string): string[] => {
    const out = new Set<string>();
    for (const r of routes) if (r.pattern.test(path)) for (const m of r.methods) out.add(m);
    return [...out].sort();
  });
}

/**
 * 405 with `Allow` when some route answers `req`'s path under other methods (RFC 9110 §15.5.6);
 * false (nothing sent) when no route has the path, for the caller's 404.
 */
export function answerMethodNotAllowed(req: FastifyRequest, reply: FastifyReply, body: (message: string) => unknown): boolean {
  const path = req.url.split('?')[0]!;
  const allowed = req.server.allowedMethods(path);
  if (allowed.length === 0) return false;
  void reply.status(405).header('allow', allowed.join(', ')).send(body(`method ${req.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`));
  return true;
}
