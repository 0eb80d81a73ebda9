import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import { api, startTestDaemon } from '../helpers/daemon.js';
import { startGitFixture } from '../helpers/git-fixture.js';

// The redirect listener against real curl (docs/redirects.md): rules from a signed git manifest and
// from REST, 301 and 302, preservePath on and off, wildcards, other methods, unknown hosts; a
// change and a delete over REST answered by the same running daemon.

const run = promisify(execFile);

interface CurlAnswer { status: number; headers: Record<string, string>; body: string }

/** `curl -s -D - -H 'Host: …' http://127.0.0.1:<port><path>` (HEAD with `-I` unless a method is given). */
async function curl(port: number, host: string, path: string, method?: string): Promise<CurlAnswer> {
  const args = ['-s', '--max-time', '5', '-H', `Host: ${host}`];
  if (method === undefined) args.push('-I');
  else args.push('-X', method, '-D', '-', ...(method === 'POST' ? ['-d', 'a=1'] : []));
  const { stdout } = await run('curl', [...args, `http://127.0.0.1:${port}${path}`]);
  const [head, ...rest] = stdout.split('\r\n\r\n');
  const lines = head!.split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
  }
  return { status: Number(lines[0]!.split(' ')[1]), headers, body: rest.join('\r\n\r\n') };
}

/** Sends raw bytes and returns whatever comes back before the server closes (or 2 s pass). */
function raw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let out = '';
    s.on('data', (d) => { out += d.toString(); });
    s.on('error', () => resolve(out));
    s.on('close', () => resolve(out));
    s.setTimeout(2000, () => s.destroy());
    s.write(bytes);
  });
}

const MANIFEST = `apiVersion: gslb/v1
kind: Redirect
metadata:
  name: docs
spec:
  host: Docs.Example.test
  target: https://docs.example.org/manual
  code: 301
  preservePath: false
`;

test('redirect listener: git and REST rules answered by curl; a change and a delete take effect without restart', async () => {
  const fx = await startGitFixture();
  fx.repo.write('redirects/docs.yaml', MANIFEST);
  const sha = fx.repo.commit('Redirect docs.example.test', fx.ops);
  const d = await startTestDaemon({ gitops: fx.gitops, redirect: { enabled: true, listenAddr: '127.0.0.1', port: 0 } } as never, { GITOPS_WEBHOOK_SECRET: fx.webhookSecret });
  try {
    const port = d.ports.redirectPort!;
    assert.ok(port > 0);
    const rec = await api(d.url, 'POST', '/api/v1/gitops/reconcile', {});
    assert.equal(rec.body.ready, true, rec.body.message);

    // the git rule: 301, target as written, path and query dropped, cached an hour
    let a = await curl(port, 'docs.example.test', '/old/page?x=1');
    assert.equal(a.status, 301);
    assert.equal(a.headers.location, 'https://docs.example.org/manual');
    assert.equal(a.headers['cache-control'], 'max-age=3600');
    assert.equal((await curl(port, 'DOCS.example.test.:8080', '/')).headers.location, 'https://docs.example.org/manual', 'Host compared without port, case or trailing dot');

    // REST rules
    const post = async (body: unknown) => {
      const r = await api(d.url, 'POST', '/api/v1/redirects', body);
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body as { id: string; code: number; preservePath: boolean; origin: string };
    };
    const shop = await post({ host: 'shop.example.test', target: 'https://store.example.org/base' });
    assert.deepEqual([shop.code, shop.preservePath, shop.origin], [302, true, 'api'], 'defaults: 302, preservePath true');
    await post({ host: 'blog.example.test', target: 'http://blog.example.org/', code: 301, preservePath: true });
    await post({ host: 'plain.example.test', target: 'https://plain.example.org/landing?ref=old', code: 302, preservePath: false });
    await post({ host: '*.wild.example.test', target: 'https://wild.example.org', code: 301 });
    await post({ host: 'exact.wild.example.test', target: 'https://exact.example.org', code: 302 });

    a = await curl(port, 'shop.example.test', '/cart/items?id=7&q=a%20b');
    assert.equal(a.status, 302);
    assert.equal(a.headers.location, 'https://store.example.org/base/cart/items?id=7&q=a%20b');
    assert.equal(a.headers['cache-control'], 'no-store');
    assert.equal((await curl(port, 'shop.example.test', '/')).headers.location, 'https://store.example.org/base');
    a = await curl(port, 'blog.example.test', '/2024/post');
    assert.deepEqual([a.status, a.headers.location], [301, 'http://blog.example.org/2024/post']);
    a = await curl(port, 'plain.example.test', '/anything?z=9');
    assert.deepEqual([a.status, a.headers.location], [302, 'https://plain.example.org/landing?ref=old']);
    a = await curl(port, 'a.b.wild.example.test', '/p');
    assert.deepEqual([a.status, a.headers.location], [301, 'https://wild.example.org/p'], 'a wildcard answers names at any depth below it');
    a = await curl(port, 'exact.wild.example.test', '/p');
    assert.deepEqual([a.status, a.headers.location], [302, 'https://exact.example.org/p'], 'exact beats wildcard');
    assert.equal((await curl(port, 'wild.example.test', '/')).status, 404, 'a wildcard does not answer its own base name');

    // other methods keep their method: 308 for 301, 307 for 302; GET has a small body
    a = await curl(port, 'blog.example.test', '/form', 'POST');
    assert.deepEqual([a.status, a.headers.location], [308, 'http://blog.example.org/form']);
    a = await curl(port, 'shop.example.test', '/api', 'DELETE');
    assert.deepEqual([a.status, a.headers.location], [307, 'https://store.example.org/base/api']);
    a = await curl(port, 'shop.example.test', '/x', 'GET');
    assert.equal(a.status, 302);
    assert.equal(a.body, 'Redirecting to https://store.example.org/base/x\n');

    // unknown host, and input the listener cannot use: answered, never a crash
    a = await curl(port, 'nobody.example.test', '/');
    assert.equal(a.status, 404);
    assert.equal(a.headers['cache-control'], 'no-store');
    assert.equal((await curl(port, '[::1]:80', '/')).status, 404);
    assert.match(await raw(port, 'GARBAGE\r\n\r\n'), /^HTTP\/1\.1 400/);
    assert.match(await raw(port, 'GET /\u00e9t\u00e9 HTTP/1.1\r\nHost: shop.example.test\r\nConnection: close\r\n\r\n'), /^HTTP\/1\.1 400/, 'a target that is not ASCII');
    assert.match(await raw(port, 'GET http://shop.example.test/abs?q=1 HTTP/1.1\r\nHost: other.example.test\r\nConnection: close\r\n\r\n'),
      /location: https:\/\/store\.example\.org\/base\/abs\?q=1/i, 'an absolute-form target names the host');

    // change over REST: the next request gets the new answer from the same process
    const put = await api(d.url, 'PUT', `/api/v1/redirects/${shop.id}`, { host: 'shop.example.test', target: 'https://shop2.example.org', code: 301, preservePath: false });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    a = await curl(port, 'shop.example.test', '/cart');
    assert.deepEqual([a.status, a.headers.location], [301, 'https://shop2.example.org/']);
    // delete: the host answers 404
    assert.equal((await api(d.url, 'DELETE', `/api/v1/redirects/${shop.id}`)).status, 204);
    assert.equal((await curl(port, 'shop.example.test', '/cart')).status, 404);
    assert.equal((await api(d.url, 'GET', `/api/v1/redirects/${shop.id}`)).status, 404);

    // the git rule is read-only over REST: 409 naming the file and commit
    const list = (await api(d.url, 'GET', '/api/v1/redirects')).body as { id: string; host: string; origin: string; source?: string }[];
    const git = list.find((r) => r.host === 'docs.example.test')!;
    assert.deepEqual([git.origin, git.source], ['git', 'redirects/docs.yaml']);
    const gitPut = await api(d.url, 'PUT', `/api/v1/redirects/${git.id}`, { host: 'docs.example.test', target: 'https://elsewhere.example.org' });
    assert.equal(gitPut.status, 409);
    assert.match(gitPut.body.error, /redirects\/docs\.yaml/);
    assert.match(gitPut.body.error, new RegExp(sha.slice(0, 12)));
    assert.equal((await api(d.url, 'DELETE', `/api/v1/redirects/${git.id}`)).status, 409);
    const dup = await api(d.url, 'POST', '/api/v1/redirects', { host: 'docs.example.test', target: 'https://x.example.org' });
    assert.equal(dup.status, 409);
    assert.match(dup.body.error, /^host: docs\.example\.test already has a redirect rule/);

    // validation names the field
    const bad = await api(d.url, 'POST', '/api/v1/redirects', { host: 'a.example.test:8080', target: 'ftp://x', code: 307, preservePath: 'yes' });
    assert.equal(bad.status, 400);
    for (const f of ['host', 'target', 'code', 'preservePath']) assert.match(bad.body.error, new RegExp(`${f}: `), f);
    const creds = await api(d.url, 'POST', '/api/v1/redirects', { host: 'c.example.test', target: 'https://user:pw@x.example.org/' });
    assert.deepEqual([creds.status, creds.body.error], [400, 'target: must not carry a user name or password']);
    assert.equal((await api(d.url, 'POST', '/api/v1/redirects', { host: '192.0.2.1', target: 'https://x.example.org/' })).status, 400, 'an IP address is not a host name');

    // the counter by status
    const metrics = await d.core.metrics.metrics();
    assert.match(metrics, /gslbd_redirect_requests_total\{code="301"[^}]*\} [1-9]/);
    assert.match(metrics, /gslbd_redirect_requests_total\{code="307"[^}]*\} 1\n/);
    assert.match(metrics, /gslbd_redirect_requests_total\{code="404"[^}]*\} [1-9]/);
  } finally {
    await d.stop();
    await fx.close();
  }
});

test('redirect listener off: no port is bound, the rules API still works', async () => {
  const d = await startTestDaemon();
  try {
    assert.equal(d.ports.redirectPort, undefined);
    assert.equal((await api(d.url, 'POST', '/api/v1/redirects', { host: 'a.example.test', target: 'https://b.example.org' })).status, 201);
  } finally {
    await d.stop();
  }
});
