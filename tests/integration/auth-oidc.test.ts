import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { startTestDaemon, api } from '../helpers/daemon.js';
import { signInThroughProvider, startTestProvider } from '../helpers/oidc-provider.js';
import { setOidcFetch } from '../../runtime/auth/oidc.js';
import { MemoryNonceStore } from '../../runtime/ports/sessions.js';

const freePort = () => new Promise<number>((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => { const p = (s.address() as AddressInfo).port; s.close(() => resolve(p)); });
});

test('single sign-on against oidc-provider over https with a test CA', async () => {
  const SYS = randomBytes(32).toString('hex');
  const CLIENT_SECRET = randomBytes(24).toString('hex');
  const port = await freePort();
  const redirectUri = `http://127.0.0.1:${port}/api/v1/auth/oidc/callback`;
  const provider = await startTestProvider({ clientId: 'gslbd', clientSecret: CLIENT_SECRET, redirectUri }, {
    alice: { email: 'alice@corp.test', email_verified: true, name: 'Alice', org: { roles: ['staff', 'gslb-ops'] } },
    bob: { email: 'bob@corp.test', email_verified: true, name: 'Bob' },
    carol: { email: 'carol@corp.test', email_verified: true, org: { roles: 'gslb-admins' } },
    eve: { email: 'eve@elsewhere.test', email_verified: true, org: { roles: ['gslb-admins'] } },
  });
  setOidcFetch(provider.fetch as never);
  let d: Awaited<ReturnType<typeof startTestDaemon>> | undefined;
  try {
    d = await startTestDaemon({
      api: { port },
      auth: {
        bcryptCost: 10,
        oidc: {
          enabled: true, discoveryUrl: provider.issuer, clientId: 'gslbd', clientSecret: CLIENT_SECRET, redirectUri,
          roleClaim: 'org.roles', roleMapping: { 'gslb-admins': 'tenant_admin', 'gslb-ops': 'operator' }, defaultRole: 'viewer',
          allowedDomains: ['corp.test'],
        },
      },
    } as never, { GSLB_API_KEY: SYS });
    const D = d;
    const secrets = new Set<string>([SYS, CLIENT_SECRET]);
    assert.deepEqual((await api(D.url, 'GET', '/api/v1/auth/sso')).body, { enabled: true, authorizeUrl: '/api/v1/auth/oidc/authorize' });

    const signIn = async (login: string) => {
      const auth = await fetch(`${D.url}/api/v1/auth/oidc/authorize`, { redirect: 'manual' });
      assert.equal(auth.status, 302);
      const to = new URL(auth.headers.get('location')!);
      assert.equal(to.origin, provider.issuer);
      assert.equal(to.searchParams.get('code_challenge_method'), 'S256');
      assert.ok(to.searchParams.get('state') && to.searchParams.get('code_challenge'));
      return signInThroughProvider(provider, to.href, redirectUri, login);
    };
    const callback = async (url: string) => fetch(url, { redirect: 'manual' });

    // alice: list claim, first mapped value → operator; created with auth_provider oidc
    const cbA = await signIn('alice');
    const resA = await callback(cbA);
    assert.equal(resA.status, 302, await resA.clone().text());
    assert.equal(resA.headers.get('location'), '/');
    const cookieA = /gslb_session=([\w-]+)/.exec(resA.headers.get('set-cookie') ?? '')![1]!;
    secrets.add(cookieA);
    assert.match(resA.headers.get('set-cookie')!, /HttpOnly; SameSite=Lax/);
    const meA = await api(D.url, 'GET', '/api/v1/auth/me', undefined, { cookie: `gslb_session=${cookieA}` });
    assert.equal(meA.status, 200);
    assert.equal(meA.body.email, 'alice@corp.test');
    assert.equal(meA.body.role, 'operator');
    assert.equal(meA.body.auth_provider, 'oidc');
    assert.equal(meA.body.displayName, 'Alice');
    const row = D.core.db.prepare(`SELECT json_extract(data, '$.authProvider') AS auth_provider, json_extract(data, '$.passwordHash') AS password_hash, tenant_id
      FROM resources WHERE kind = 'user' AND json_extract(data, '$.email') = 'alice@corp.test'`).get() as Record<string, unknown>;
    assert.deepEqual(row, { auth_provider: 'oidc', password_hash: null, tenant_id: 'default' });

    // replaying the same callback (same state) is refused
    const replay = await callback(cbA);
    assert.equal(replay.status, 400);
    assert.match(((await replay.json()) as { error: string }).error, /unknown, used or expired sign-in state/);

    // bob: no role claim → defaultRole; carol: string claim → tenant_admin
    const resB = await callback(await signIn('bob'));
    const cookieB = /gslb_session=([\w-]+)/.exec(resB.headers.get('set-cookie') ?? '')![1]!;
    assert.equal((await api(D.url, 'GET', '/api/v1/auth/me', undefined, { cookie: `gslb_session=${cookieB}` })).body.role, 'viewer');
    const resC = await callback(await signIn('carol'));
    const cookieC = /gslb_session=([\w-]+)/.exec(resC.headers.get('set-cookie') ?? '')![1]!;
    assert.equal((await api(D.url, 'GET', '/api/v1/auth/me', undefined, { cookie: `gslb_session=${cookieC}` })).body.role, 'tenant_admin');
    secrets.add(cookieB).add(cookieC);

    // a second sign-in finds the same user (no duplicate)
    await callback(await signIn('alice'));
    assert.equal((D.core.db.prepare("SELECT count(*) AS n FROM resources WHERE kind = 'user' AND json_extract(data, '$.email') = 'alice@corp.test'").get() as { n: number }).n, 1);

    // eve: outside allowedDomains → 403, no user, no cookie
    const resE = await callback(await signIn('eve'));
    assert.equal(resE.status, 403);
    assert.match(((await resE.json()) as { error: string }).error, /not allowed/);
    assert.equal(resE.headers.get('set-cookie'), null);
    assert.equal(D.core.db.prepare("SELECT 1 FROM resources WHERE kind = 'user' AND json_extract(data, '$.email') = 'eve@elsewhere.test'").get(), undefined);

    // an expired state (older than 10 minutes) is refused
    let now = Date.now();
    D.core.nonces = new MemoryNonceStore(() => now);
    const late = await signIn('alice');
    now += 10 * 60_000 + 1000;
    const resL = await callback(late);
    assert.equal(resL.status, 400);
    // a made-up state is refused too
    const forged = new URL(late); forged.searchParams.set('state', 'forged-state');
    assert.equal((await callback(forged.href)).status, 400);

    // single-sign-on users cannot use the password form
    assert.equal((await api(D.url, 'POST', '/api/v1/auth/login', { email: 'alice@corp.test', password: 'anything-1' })).status, 401);

    const logs = D.logs.text();
    for (const s of secrets) assert.ok(!logs.includes(s), `secret …${s.slice(-4)} in logs`);
  } finally {
    await d?.stop();
    setOidcFetch(undefined);
    await provider.close();
  }
});

test('single sign-on discovery runs at startup: an unreachable provider stops the start', async () => {
  const port = await freePort();
  await assert.rejects(startTestDaemon({
    auth: { oidc: { enabled: true, discoveryUrl: `https://127.0.0.1:${port}`, clientId: 'c', clientSecret: 's', redirectUri: 'http://127.0.0.1:1/api/v1/auth/oidc/callback' } },
  } as never, { GSLB_API_KEY: 'k'.repeat(32) }), /auth\.oidc: discovery at https:\/\/127\.0\.0\.1:\d+ failed/);
});
