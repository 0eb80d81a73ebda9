import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startTestDaemon, api } from '../helpers/daemon.js';
import type { RouteAccess } from '../../runtime/ports/route-registry.js';

// gslb-config-auth.md §5.4 written out independently of runtime/auth/permissions.ts, so a change
// to the code's table that breaks the spec fails here.
const SPEC: Record<string, string[]> = {
  tenant_admin: ['pools:read', 'pools:write', 'redirects:read', 'redirects:write', 'users:read', 'users:write', 'settings:read', 'settings:write', 'gitops:read', 'gitops:write', 'cluster:read', 'backups:write', 'license:read', 'apikeys:read', 'apikeys:write'],
  operator: ['pools:read', 'pools:write', 'redirects:read', 'redirects:write', 'users:read', 'gitops:read', 'cluster:read', 'license:read', 'apikeys:read'],
  viewer: ['pools:read', 'redirects:read', 'users:read', 'gitops:read', 'cluster:read', 'license:read'],
};

// Routes whose permission the spec fixes (or docs/auth.md decides): a route that declares
// something else fails the test. Routes added later and missing here are still walked below,
// with the expectation derived from their declaration and the SPEC table.
const DECLARED: Record<string, string> = {
  'GET /api/v1/pools': 'pools:read', 'POST /api/v1/pools': 'pools:write', 'PUT /api/v1/pools/:id': 'pools:write',
  'DELETE /api/v1/pools/:id': 'pools:write', 'POST /api/v1/pools/:id/members': 'pools:write', 'GET /api/v1/members/:id': 'pools:read',
  'GET /api/v1/services': 'pools:read', 'POST /api/v1/services': 'pools:write', 'GET /api/v1/pools/:id/status': 'pools:read',
  // TXT records are DNS resources of the tenant like services (docs/dns.md "TXT records")
  'GET /api/v1/dns/txt': 'pools:read', 'POST /api/v1/dns/txt': 'pools:write', 'PUT /api/v1/dns/txt/:id': 'pools:write', 'DELETE /api/v1/dns/txt/:id': 'pools:write',
  'GET /api/v1/users': 'users:read', 'GET /api/v1/users/:id': 'users:read', 'POST /api/v1/users': 'users:write',
  'PUT /api/v1/users/:id': 'users:write', 'DELETE /api/v1/users/:id': 'users:write',
  'GET /api/v1/tenants': 'tenants:read', 'POST /api/v1/tenants': 'tenants:write', 'POST /api/v1/tenants/:id/apikeys': 'tenants:write',
  'POST /api/v1/auth/setup': 'public', 'POST /api/v1/auth/login': 'public', 'GET /api/v1/auth/sso': 'public',
  'GET /api/v1/auth/oidc/authorize': 'public', 'GET /api/v1/auth/oidc/callback': 'public', 'POST /api/v1/auth/password-reset': 'public',
  'POST /api/v1/auth/password-reset/confirm': 'public', 'GET /api/v1/health': 'public',
  'POST /api/v1/auth/logout': 'authenticated', 'GET /api/v1/auth/me': 'authenticated',
  'POST /api/v1/auth/totp/setup': 'authenticated', 'POST /api/v1/auth/totp/verify': 'authenticated',
  'GET /api/v1/gitops/status': 'gitops:read', 'POST /api/v1/gitops/reconcile': 'gitops:write', 'POST /api/v1/gitops/plan': 'gitops:read',
  'POST /api/v1/gitops/replay': 'gitops:read',
  'GET /api/v1/cluster': 'cluster:read', 'GET /api/v1/cluster/health': 'cluster:read',
  // the database and the license belong to the system (docs/backup.md, docs/license.md)
  'POST /api/v1/system/backup': 'backups:write', 'GET /api/v1/license': 'license:read',
  // BGP is server-wide like the cluster (docs/bgp.md "Status")
  'GET /api/v1/bgp': 'cluster:read',
  'GET /api/v1/settings/smtp': 'settings:read', 'PUT /api/v1/settings/smtp': 'settings:write',
  // form-service keys (docs/forms.md): a tenant_admin makes them, an operator may list them
  'GET /api/v1/apikeys': 'apikeys:read', 'POST /api/v1/apikeys': 'apikeys:write', 'DELETE /api/v1/apikeys/:id': 'apikeys:write',
  // HTTP redirect rules (docs/redirects.md): read like pools, written by tenant_admin and operator
  'GET /api/v1/redirects': 'redirects:read', 'POST /api/v1/redirects': 'redirects:write', 'GET /api/v1/redirects/:id': 'redirects:read',
  'PUT /api/v1/redirects/:id': 'redirects:write', 'DELETE /api/v1/redirects/:id': 'redirects:write',
  // alert subscriptions are settings of the tenant: where its alerts go, with secret references (docs/alerts.md)
  'GET /api/v1/alert-targets': 'settings:read', 'POST /api/v1/alert-targets': 'settings:write', 'GET /api/v1/alert-targets/:id': 'settings:read',
  'PUT /api/v1/alert-targets/:id': 'settings:write', 'DELETE /api/v1/alert-targets/:id': 'settings:write', 'POST /api/v1/alert-targets/:id/test': 'settings:write',
};

// Public auth routes: the same answer for everybody (setup is done, single sign-on and mail are off).
const PUBLIC_STATUS: Record<string, number> = {
  'POST /api/v1/auth/setup': 404, 'POST /api/v1/auth/login': 401, 'GET /api/v1/auth/sso': 200,
  'GET /api/v1/auth/oidc/authorize': 404, 'GET /api/v1/auth/oidc/callback': 404, 'POST /api/v1/auth/password-reset': 503,
  'POST /api/v1/auth/password-reset/confirm': 400, 'GET /api/v1/health': 200,
};

// Server-wide permissions: held by roles of the operator tenant (`default` here) only (docs/security.md).
const SERVER = new Set(['gitops:read', 'gitops:write', 'cluster:read', 'backups:write', 'license:read']);

type Who = 'none' | 'system' | 'tenant_admin' | 'operator' | 'viewer' | 'legacy_key' | 'acme_admin' | 'acme_operator' | 'acme_viewer' | 'acme_key';
const WHO: Who[] = ['none', 'system', 'tenant_admin', 'operator', 'viewer', 'legacy_key', 'acme_admin', 'acme_operator', 'acme_viewer', 'acme_key'];
const ROLE_OF: Partial<Record<Who, string>> = {
  tenant_admin: 'tenant_admin', operator: 'operator', viewer: 'viewer', legacy_key: 'tenant_admin',
  acme_admin: 'tenant_admin', acme_operator: 'operator', acme_viewer: 'viewer', acme_key: 'tenant_admin',
};
type Tenant = 'default' | 'acme';
const TENANT_OF = (w: Who): Tenant | null => (w === 'none' || w === 'system' ? null : w.startsWith('acme_') ? 'acme' : 'default');
const SESSION_USERS: Who[] = ['tenant_admin', 'operator', 'viewer', 'acme_admin', 'acme_operator', 'acme_viewer'];

test('permission matrix: every /api/v1 route × every kind of caller × both tenants', async () => {
  const SYS = randomBytes(32).toString('hex');
  const d = await startTestDaemon({ auth: { bcryptCost: 10 } } as never, { GSLB_API_KEY: SYS, GSLB_SECRET_KEY: randomBytes(32).toString('hex') });
  const secrets = new Set<string>([SYS]);
  try {
    const sys = { authorization: `Bearer ${SYS}` };
    let n = 0;
    const uniq = () => `${Date.now().toString(36)}${++n}`;
    const ok = async (m: string, p: string, body?: unknown, h: Record<string, string> = sys) => {
      const r = await api(d.url, m, p, body, h);
      assert.ok(r.status < 300, `${m} ${p}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    };
    // users and credentials of two tenants: `default` (the operator tenant) and `acme`
    await ok('POST', '/api/v1/auth/setup', { email: 'admin@default.test', password: 'admin-pass-1' }, {});
    await ok('POST', '/api/v1/tenants', { id: 'acme', name: 'Acme' });
    await ok('POST', '/api/v1/users', { email: 'op@default.test', password: 'op-pass-123', role: 'operator' });
    await ok('POST', '/api/v1/users', { email: 'view@default.test', password: 'view-pass-1', role: 'viewer' });
    await ok('POST', '/api/v1/users', { email: 'admin@acme.test', password: 'acme-pass-1', role: 'tenant_admin', tenantId: 'acme' });
    await ok('POST', '/api/v1/users', { email: 'op@acme.test', password: 'acme-op-pass', role: 'operator', tenantId: 'acme' });
    await ok('POST', '/api/v1/users', { email: 'view@acme.test', password: 'acme-view-pa', role: 'viewer', tenantId: 'acme' });
    const legacy = (await ok('POST', '/api/v1/tenants/default/apikeys', { name: 'legacy' })).key as string;
    const acmeKey = (await ok('POST', '/api/v1/tenants/acme/apikeys', { name: 'acme-legacy' })).key as string;
    secrets.add(legacy); secrets.add(acmeKey);
    const login = async (email: string, password: string) => {
      secrets.add(password);
      const t = (await ok('POST', '/api/v1/auth/login', { email, password }, {})).token as string;
      secrets.add(t);
      return t;
    };
    const creds: Record<Who, () => Promise<Record<string, string>>> = {
      none: async () => ({}),
      system: async () => sys,
      tenant_admin: async () => ({ authorization: `Bearer ${await login('admin@default.test', 'admin-pass-1')}` }),
      operator: async () => ({ cookie: `gslb_session=${await login('op@default.test', 'op-pass-123')}` }),
      viewer: async () => ({ authorization: `Bearer ${await login('view@default.test', 'view-pass-1')}` }),
      legacy_key: async () => ({ authorization: `Bearer ${legacy}` }),
      acme_admin: async () => ({ authorization: `Bearer ${await login('admin@acme.test', 'acme-pass-1')}` }),
      acme_operator: async () => ({ cookie: `gslb_session=${await login('op@acme.test', 'acme-op-pass')}` }),
      acme_viewer: async () => ({ authorization: `Bearer ${await login('view@acme.test', 'acme-view-pa')}` }),
      acme_key: async () => ({ authorization: `Bearer ${acmeKey}` }),
    };
    const headers = {} as Record<Who, Record<string, string>>;
    for (const w of WHO) headers[w] = await creds[w]();
    // each tenant's rows are made by a credential of that tenant
    const maker: Record<Tenant, Record<string, string>> = { default: sys, acme: headers.acme_key };

    // fresh rows of one tenant for each case, so deletes do not starve later cases
    const fixture = async (url: string, tenant: Tenant) => {
      const h = maker[tenant];
      const ids: Record<string, string> = { tenants: tenant };
      if (url.startsWith('/api/v1/users')) {
        ids.users = (await ok('POST', '/api/v1/users', { email: `spare-${uniq()}@${tenant}.test`, password: 'spare-pass-1', role: 'viewer' }, h)).userId;
      } else if (url.startsWith('/api/v1/apikeys')) {
        ids.apikeys = (await ok('POST', `/api/v1/apikeys?tenant=${tenant}`, { name: `spare-${uniq()}`, scopes: ['forms:read'] })).id;
      } else if (url.startsWith('/api/v1/redirects')) {
        ids.redirects = (await ok('POST', '/api/v1/redirects', { host: `r-${uniq()}.${tenant}.example.test`, target: 'https://target.example.org/' }, h)).id;
      } else if (url.startsWith('/api/v1/alert-targets')) {
        // a receiver that refuses at once, so /test answers quickly (502)
        ids['alert-targets'] = (await ok('POST', '/api/v1/alert-targets', { name: `a-${uniq()}`, type: 'webhook', webhook: { url: 'http://127.0.0.1:9/hook' } }, h)).id;
      } else if (url.startsWith('/api/v1/tenants')) {
        ids.keyId = (await ok('POST', `/api/v1/tenants/${tenant}/apikeys`, { name: 'spare' })).id;
      } else {
        ids.pools = (await ok('POST', '/api/v1/pools', { name: `p-${uniq()}` }, h)).id;
        ids.members = (await ok('POST', `/api/v1/pools/${ids.pools}/members`, { ipAddress: '127.0.0.10', port: 80 }, h)).id;
        await ok('PUT', `/api/v1/pools/${ids.pools}/healthcheck`, { type: 'tcp', port: 80 }, h);
        ids.georules = (await ok('POST', `/api/v1/pools/${ids.pools}/georules`, { cidr: '10.0.0.0/8', endpoint: '127.0.0.10' }, h)).id;
        const name = `s-${uniq()}`;
        ids.services = (await ok('POST', '/api/v1/services', { name, domain: `${name}.${tenant}.example.test.`, poolId: ids.pools }, h)).id;
        // a TXT record inside the zone of the tenant's service name (no dns.domain here)
        ids.zone = `${name}.${tenant}.example.test.`;
        if (url.startsWith('/api/v1/dns/txt')) ids.dns = (await ok('POST', '/api/v1/dns/txt', { name: `_t.${ids.zone}`, values: ['x'] }, h)).id;
      }
      return ids;
    };
    const bodyFor = (key: string, ids: Record<string, string>): unknown => {
      const u = uniq();
      const bodies: Record<string, unknown> = {
        'POST /api/v1/pools': { name: `np-${u}` }, 'POST /api/v1/apikeys': { name: `k-${u}`, scopes: ['forms:read'] }, 'PUT /api/v1/pools/:id': { name: `rp-${u}` },
        'POST /api/v1/pools/:id/members': { ipAddress: '127.0.0.11', port: 81 }, 'PUT /api/v1/members/:id': { ipAddress: '127.0.0.12', port: 82 },
        'POST /api/v1/services': { name: `ns-${u}`, domain: `ns-${u}.example.test.`, poolId: ids.pools },
        'PUT /api/v1/services/:id': { name: `rs-${u}`, domain: `rs-${u}.example.test.`, poolId: ids.pools },
        'POST /api/v1/dns/txt': { name: `_n-${u}.${ids.zone}`, values: ['v'] }, 'PUT /api/v1/dns/txt/:id': { name: `_r-${u}.${ids.zone}`, values: ['w'] },
        'PUT /api/v1/pools/:id/healthcheck': { type: 'tcp', port: 81 }, 'POST /api/v1/pools/:id/georules': { cidr: '10.1.0.0/16', endpoint: '127.0.0.10' },
        'POST /api/v1/redirects': { host: `nr-${u}.example.test`, target: 'https://new.example.org/' },
        'PUT /api/v1/redirects/:id': { host: `rr-${u}.example.test`, target: 'https://changed.example.org/', code: 301 },
        'POST /api/v1/users': { email: `new-${u}@x.test`, password: 'new-pass-12', role: 'viewer' }, 'PUT /api/v1/users/:id': { displayName: `n${u}` },
        'POST /api/v1/tenants': { id: `t-${u}` }, 'POST /api/v1/tenants/:id/apikeys': { name: 'k' },
        'POST /api/v1/auth/login': { email: `nobody-${u}@x.test`, password: 'wrong-pass-1' }, 'POST /api/v1/auth/setup': { email: `s-${u}@x.test`, password: 'setup-pass-1' },
        'POST /api/v1/auth/totp/verify': { code: '000000' }, 'POST /api/v1/auth/password-reset': { email: 'admin@default.test' },
        'POST /api/v1/auth/password-reset/confirm': { token: 'bogus', password: 'whatever-1' },
        'POST /api/v1/system/backup': {},
        'POST /api/v1/alert-targets': { name: `na-${u}`, type: 'email', email: { to: [`ops-${u}@x.test`] } },
        'PUT /api/v1/alert-targets/:id': { name: `ra-${u}`, type: 'webhook', webhook: { url: 'http://127.0.0.1:9/changed' }, events: ['health'] },
      };
      return bodies[key];
    };

    const routes = (d.core.ports.routes as RouteAccess[]).filter((r) => r.url.startsWith('/api/v1/') && r.url !== '/api/v1/openapi.json');
    assert.ok(routes.length >= 40, `route registry found only ${routes.length} routes`);
    for (const [key, want] of Object.entries(DECLARED)) {
      const r = routes.find((x) => `${x.method} ${x.url}` === key);
      assert.ok(r, `${key} is not registered`);
      assert.equal(r.public ? 'public' : r.authenticated ? 'authenticated' : r.permission, want, `${key} declares the wrong access`);
    }

    const failures: string[] = [];
    const shared: Record<string, Record<string, string>> = {};
    const publicStatuses = new Map<string, Set<number>>();
    let cases = 0;
    for (const r of routes) {
      const key = `${r.method} ${r.url}`;
      const group = r.url.split('/')[3]!;
      // a route with an id runs against both tenants' rows; one without, once (its rows are the caller's)
      const hasId = r.url.includes(':');
      for (const who of WHO) {
        const own = TENANT_OF(who) ?? 'default';
        for (const target of hasId ? (['default', 'acme'] as Tenant[]) : [own]) {
          // one fixture per resource group and tenant, rebuilt only after a write succeeded (refused calls change nothing)
          const slot = `${group}/${target}`;
          const ids = (shared[slot] ??= await fixture(r.url, target));
          const path = r.url.replace(/:(\w+)/g, (_m, p: string) => (p === 'keyId' ? ids.keyId! : ids[group] ?? 'no-such-id'));
          let h = headers[who];
          // logging out revokes the session: use a throwaway one
          if (key === 'POST /api/v1/auth/logout' && SESSION_USERS.includes(who)) h = await creds[who]();
          const body = bodyFor(key, ids) ?? (r.method === 'POST' || r.method === 'PUT' ? {} : undefined);
          const res = await api(d.url, r.method, path, body, h);
          cases++;
          if (r.method !== 'GET' && res.status < 300) delete shared[slot];
          const role = ROLE_OF[who];
          const tenant = TENANT_OF(who);
          let want: (s: number) => boolean;
          let desc: string;
          const known = bodyFor(key, ids) !== undefined || r.method === 'GET' || r.method === 'DELETE';
          const success = (s: number) => (known ? s >= 200 && s < 300 : s !== 401 && s !== 403);
          if (r.public) {
            // public: credentials make no difference (routes with their own check, like a signed
            // webhook, answer everybody alike)
            const fixed = PUBLIC_STATUS[key];
            if (!publicStatuses.has(key)) publicStatuses.set(key, new Set());
            publicStatuses.get(key)!.add(res.status);
            want = fixed !== undefined ? (s) => s === fixed : () => true; desc = fixed !== undefined ? String(fixed) : 'any';
          } else if (who === 'none') {
            want = (s) => s === 401; desc = '401';
          } else if (r.authenticated) {
            const needsUser = r.url.startsWith('/api/v1/auth/totp/');
            if (needsUser && (who === 'system' || who === 'legacy_key' || who === 'acme_key')) { want = (s) => s === 403; desc = '403'; }
            else if (key === 'POST /api/v1/auth/totp/verify') { want = (s) => s === 400; desc = '400 (no enrolment)'; }
            else { want = success; desc = '2xx'; }
          } else {
            const perm = r.permission;
            const allowed = who === 'system' || (role !== undefined && perm !== undefined && SPEC[role]!.includes(perm) && (!SERVER.has(perm) || tenant === 'default'));
            if (!allowed) { want = (s) => s === 403; desc = '403'; }
            else if (who !== 'system' && hasId && target !== tenant) { want = (s) => s === 404; desc = '404 (other tenant)'; }
            else { want = success; desc = known ? '2xx' : 'not 401/403'; }
          }
          if (!want(res.status)) failures.push(`${key} as ${who} on ${target} rows: got ${res.status} ${JSON.stringify(res.body)?.slice(0, 300)}, want ${desc}`);
          // tenant isolation on lists and documents: a tenant caller never sees the other tenant's rows
          if (tenant !== null && r.method === 'GET' && res.status === 200) {
            const other = tenant === 'default' ? 'acme' : 'default';
            const text = JSON.stringify(res.body);
            if (text.includes(`"tenantId":"${other}"`) || text.includes(`@${other}.test`) || text.includes(`.${other}.example.test.`) || text.includes(`.${other}.example.test"`)) {
              failures.push(`${key} as ${who} leaks rows of tenant ${other}`);
            }
          }
        }
      }
    }
    for (const [key, statuses] of publicStatuses) if (statuses.size !== 1) failures.push(`public ${key} answers differently by caller: ${[...statuses].join(',')}`);
    assert.deepEqual(failures, [], `${failures.length} of ${cases} cases failed`);
    assert.ok(cases >= routes.length * WHO.length);
    // no secret in any captured log line
    const logs = d.logs.text();
    for (const s of secrets) assert.ok(!logs.includes(s), `a secret ending in ${s.slice(-4)} appears in the logs`);
  } finally {
    await d.stop();
  }
});
