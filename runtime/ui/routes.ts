import { createReadStream } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { resolveFolderFile, safeSegments, type Asset } from './assets.js';

/**
 * The dashboard pages' policy: scripts, styles and connections from this origin only (the feed's
 * `ws:`/`wss:` URL of the same host is `'self'` in CSP 3), no inline script or style, no framing.
 */
export const DASHBOARD_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/** Where the dashboard's files come from: the built-in set in memory, or the operator's folder. */
export type UiSource = { kind: 'builtin'; assets: Map<string, Asset> } | { kind: 'folder'; root: string };

const INDEX = 'index.html';
const LOGIN = '/ui/login?next=%2Fui%2F';

function common(reply: FastifyReply, type: string, etag: string): FastifyReply {
  // no-cache: the file names carry no version, so a browser revalidates (a cheap 304 by ETag) and
  // never runs modules of two daemon versions together
  return reply
    .header('content-type', type)
    .header('etag', etag)
    .header('cache-control', 'no-cache')
    .header('content-security-policy', DASHBOARD_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer');
}

const notModified = (req: FastifyRequest, etag: string) => req.headers['if-none-match'] === etag;

/** The path below `/ui/` of a request, still percent-encoded, without the query string. */
function pathBelowUi(req: FastifyRequest): string {
  const url = req.url.split('?')[0]!;
  return url.slice('/ui/'.length);
}

/**
 * Serves the dashboard under `/ui/` (`/ui` redirects there): `index.html` for `/ui/`, and the
 * other files by path. All routes are public (the files hold no data; the API they call enforces
 * access), except that a visitor with no valid session asking for the page itself is sent to the
 * sign-in page. `/ui/login`, `/ui/account` and their files belong to the auth part and win over
 * the wildcard. Every answer has an ETag, `Cache-Control: no-cache` and the dashboard's CSP.
 */
export const uiRoutes = (source: UiSource) => async (app: FastifyInstance): Promise<void> => {
  const pub = { config: { public: true }, schema: { hide: true } };
  const serve = async (req: FastifyRequest, reply: FastifyReply) => {
    const rel = pathBelowUi(req);
    const segs = safeSegments(rel);
    if (!segs) return reply.status(404).send({ error: 'not found' });
    const name = segs.join('/');
    if (name === INDEX && req.principal.kind === 'anon') return reply.redirect(LOGIN, 302);
    if (source.kind === 'builtin') {
      const a = source.assets.get(name);
      if (!a) return reply.status(404).send({ error: 'not found' });
      common(reply, a.type, a.etag);
      return notModified(req, a.etag) ? reply.status(304).send() : reply.send(a.body);
    }
    const f = await resolveFolderFile(source.root, rel);
    if (!f) return reply.status(404).send({ error: 'not found' });
    common(reply, f.type, f.etag);
    return notModified(req, f.etag) ? reply.status(304).send() : reply.header('content-length', f.size).send(createReadStream(f.path));
  };
  app.get('/ui', pub, async (_req, reply) => reply.redirect('/ui/', 301));
  app.get('/ui/', pub, serve);
  app.get('/ui/*', pub, serve);
};
