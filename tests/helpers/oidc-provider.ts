import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { Agent, fetch as undiciFetch } from 'undici';
import { makeTestCa } from './oidc-ca.js';

/** Claims of a test account at the provider (the login typed into its form is the account id). */
export type TestAccounts = Record<string, { email: string; email_verified?: boolean; name?: string; [claim: string]: unknown }>;

export interface TestProvider {
  issuer: string;
  /** a fetch that trusts only the test CA (for the daemon's OIDC client and the test's browser-less flow) */
  fetch: typeof undiciFetch;
  close: () => Promise<void>;
}

/**
 * Starts oidc-provider in-process over https on 127.0.0.1 (port 0) with a certificate from a test
 * CA, one confidential client, and the given accounts. Its development login and consent forms
 * accept any password; `signInThroughProvider` drives them.
 */
export async function startTestProvider(client: { clientId: string; clientSecret: string; redirectUri: string }, accounts: TestAccounts): Promise<TestProvider> {
  const { ca, key, cert } = makeTestCa();
  let handler: ((req: never, res: never) => void) | undefined;
  const server: Server = createServer({ key, cert }, (req, res) => (handler ? handler(req as never, res as never) : res.end()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [{
      client_id: client.clientId, client_secret: client.clientSecret, redirect_uris: [client.redirectUri],
      grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_post',
    }],
    cookies: { keys: ['test-cookie-key-0123456789abcdef'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'org'] },
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    async findAccount(_ctx: unknown, id: string) {
      const a = accounts[id];
      if (!a) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, ...a }) };
    },
  });
  provider.on('server_error', () => { /* surfaced to the client as an error response */ });
  handler = provider.callback() as never;
  const agent = new Agent({ connect: { ca } });
  const f = ((input: Parameters<typeof undiciFetch>[0], init?: Parameters<typeof undiciFetch>[1]) => undiciFetch(input, { ...init, dispatcher: agent })) as typeof undiciFetch;
  return {
    issuer,
    fetch: f,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await agent.close();
    },
  };
}

/**
 * Follows the sign-in from the daemon's authorize URL through the provider's login and consent
 * forms (logging in as `login`) until the provider redirects to `redirectUri`. Returns that
 * callback URL (with code and state). At most 20 hops.
 */
export async function signInThroughProvider(p: TestProvider, authorizeUrl: string, redirectUri: string, login: string): Promise<string> {
  const jar = new Map<string, string>();
  let url = authorizeUrl;
  let method = 'GET';
  let body: string | undefined;
  for (let hop = 0; hop < 20; hop++) {
    if (url.startsWith(redirectUri)) return url;
    const isProvider = url.startsWith('https://');
    const headers: Record<string, string> = {};
    if (isProvider && jar.size) headers.cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = isProvider ? await p.fetch(url, { method, headers, body, redirect: 'manual' }) : await fetch(url, { method, headers, body, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) { const [nv] = c.split(';'); const eq = nv!.indexOf('='); jar.set(nv!.slice(0, eq), nv!.slice(eq + 1)); }
    method = 'GET'; body = undefined;
    const loc = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && loc) { url = new URL(loc, url).href; await res.text(); continue; }
    const html = await res.text();
    const form = /<form[^>]*action="([^"]+)"[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
    if (!form) throw new Error(`no redirect and no form at ${url}: ${res.status} ${html.slice(0, 300)}`);
    const fields = new URLSearchParams();
    for (const m of form[2]!.matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)) fields.set(m[1]!, m[2]!);
    if (/name="login"/.test(form[2]!)) { fields.set('login', login); fields.set('password', 'any'); }
    url = new URL(form[1]!.replace(/&amp;/g, '&'), url).href;
    method = 'POST';
    body = fields.toString();
  }
  throw new Error('sign-in did not reach the callback within 20 hops');
}
