import type { FastifyInstance, FastifyReply } from 'fastify';
import { ACCOUNT_HTML, LOGIN_HTML, STYLE_CSS } from '../login-ui/pages.js';
import { ACCOUNT_JS, LOGIN_JS } from '../login-ui/scripts.js';

const CSP = "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

function send(reply: FastifyReply, type: string, body: string) {
  return reply
    .header('content-type', type)
    .header('content-security-policy', CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .send(body);
}

/**
 * Serves the sign-in page at /ui/login, the signed-in page at /ui/account and their assets. All
 * public: the pages call the API, which enforces access.
 */
export async function loginUiPlugin(app: FastifyInstance): Promise<void> {
  const pub = { config: { public: true }, schema: { hide: true } };
  app.get('/ui/login', pub, async (_req, reply) => send(reply, 'text/html; charset=utf-8', LOGIN_HTML));
  app.get('/ui/account', pub, async (_req, reply) => send(reply, 'text/html; charset=utf-8', ACCOUNT_HTML));
  app.get('/ui/login/login.js', pub, async (_req, reply) => send(reply, 'text/javascript; charset=utf-8', LOGIN_JS));
  app.get('/ui/login/account.js', pub, async (_req, reply) => send(reply, 'text/javascript; charset=utf-8', ACCOUNT_JS));
  app.get('/ui/login/style.css', pub, async (_req, reply) => send(reply, 'text/css; charset=utf-8', STYLE_CSS));
}

/** GET / when nothing else serves it: the single-sign-on callback lands there (§4); go to the dashboard. */
export async function rootRedirectPlugin(app: FastifyInstance): Promise<void> {
  if (app.hasRoute({ method: 'GET', url: '/' })) return;
  app.get('/', { config: { public: true }, schema: { hide: true } }, async (_req, reply) => reply.redirect('/ui/', 302));
}
