import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { startTestDaemon, api, type TestDaemon } from '../helpers/daemon.js';
import { BUILTIN_UI_DIR } from '../../runtime/ui/part.js';

// How /ui/ serves files (docs/ui.md "Serving"): the built-in dashboard, and an operator's folder
// from api.webuiPath with paths that try to leave it (sent raw, as a browser would not normalise them).

const SYS = randomBytes(32).toString('hex');
let dir: string;
let ui: TestDaemon;
let builtin: TestDaemon;
let cookie: string;

/** A GET with the path sent exactly as written (fetch would normalise `..`). */
function rawGet(base: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gslbd-webui-'));
  const root = join(dir, 'site');
  mkdirSync(join(root, 'js'), { recursive: true });
  mkdirSync(join(root, '.git'));
  writeFileSync(join(root, 'index.html'), '<!doctype html><title>Operator UI</title><script type="module" src="/ui/js/app.mjs"></script>');
  writeFileSync(join(root, 'js', 'app.mjs'), 'export const x = 1;\n');
  writeFileSync(join(root, 'style.css'), 'body{color:red}');
  writeFileSync(join(root, 'logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(join(root, 'notes'), 'plain');
  writeFileSync(join(root, '.git', 'config'), 'secret-config');
  writeFileSync(join(root, '.env'), 'SECRET=1');
  writeFileSync(join(dir, 'outside.txt'), 'outside-secret');
  mkdirSync(join(dir, 'other'));
  writeFileSync(join(dir, 'other', 'x.js'), 'outside-dir-secret');
  symlinkSync(join(dir, 'outside.txt'), join(root, 'escape.txt'));
  symlinkSync(join(dir, 'other'), join(root, 'linked'));
  symlinkSync(join(root, 'style.css'), join(root, 'inside-link.css'));
  ui = await startTestDaemon({ api: { webuiPath: root } } as never, { GSLB_API_KEY: SYS });
  builtin = await startTestDaemon({}, { GSLB_API_KEY: SYS });
  await api(ui.url, 'POST', '/api/v1/auth/setup', { email: 'op@ui.test', password: 'operator-pass-1' });
  const login = await api(ui.url, 'POST', '/api/v1/auth/login', { email: 'op@ui.test', password: 'operator-pass-1' });
  cookie = `gslb_session=${login.body.token as string}`;
});
after(async () => {
  await ui?.stop();
  await builtin?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('api.webuiPath: files with their content types, ETag, Cache-Control and the CSP; the page itself needs a session', async () => {
  const rows: [string, number, string][] = [
    ['/ui/js/app.mjs', 200, 'text/javascript; charset=utf-8'],
    ['/ui/style.css', 200, 'text/css; charset=utf-8'],
    ['/ui/logo.svg', 200, 'image/svg+xml'],
    ['/ui/notes', 200, 'application/octet-stream'],
    ['/ui/inside-link.css', 200, 'text/css; charset=utf-8'],
  ];
  for (const [path, status, type] of rows) {
    const r = await rawGet(ui.url, path);
    assert.equal(r.status, status, path);
    assert.equal(r.headers['content-type'], type, path);
    assert.equal(r.headers['cache-control'], 'no-cache', path);
    assert.equal(r.headers['x-content-type-options'], 'nosniff', path);
    assert.match(String(r.headers['content-security-policy']), /default-src 'self'; script-src 'self'/, path);
    assert.ok(r.headers.etag, path);
    const again = await rawGet(ui.url, path, { 'if-none-match': String(r.headers.etag) });
    assert.equal(again.status, 304, `${path} revalidated`);
    assert.equal(again.body, '');
  }
  // no session: the page sends the visitor to the sign-in page; with one it is served
  const anon = await rawGet(ui.url, '/ui/');
  assert.equal(anon.status, 302);
  assert.equal(anon.headers.location, '/ui/login?next=%2Fui%2F');
  const page = await rawGet(ui.url, '/ui/', { cookie });
  assert.equal(page.status, 200);
  assert.match(page.body, /Operator UI/);
  assert.equal((await rawGet(ui.url, '/ui')).headers.location, '/ui/');
  // the sign-in page is the auth part's, whatever the folder holds
  assert.match((await rawGet(ui.url, '/ui/login')).body, /Sign in to gslbd/);
});

test('api.webuiPath: no path leaves the folder, by .., encoding, hidden names or symlinks', async () => {
  const paths = [
    '/ui/../outside.txt', '/ui/%2e%2e/outside.txt', '/ui/..%2foutside.txt', '/ui/..%5coutside.txt', '/ui/js/..%2f..%2foutside.txt',
    '/ui/escape.txt', '/ui/linked/x.js', '/ui/.git/config', '/ui/.env', '/ui/%2egit/config', '/ui/style.css%00.png',
    '/ui//etc/passwd', '/ui/%2fetc%2fpasswd', '/ui/js', '/ui/missing.js',
  ];
  for (const p of paths) {
    const r = await rawGet(ui.url, p, { cookie });
    assert.ok(r.status === 404 || (r.status >= 300 && r.status < 400 && !String(r.headers.location).includes('outside')), `${p}: ${r.status}`);
    for (const s of ['outside-secret', 'outside-dir-secret', 'secret-config', 'SECRET=1', 'root:']) assert.ok(!r.body.includes(s), `${p} leaked ${s}`);
  }
});

test('built-in dashboard: every file of webui/ is served, hidden and unknown names are 404', async () => {
  for (const [path, file, type] of [['/ui/app.css', 'app.css', 'text/css; charset=utf-8'], ['/ui/js/main.js', 'js/main.js', 'text/javascript; charset=utf-8'], ['/ui/theme.js', 'theme.js', 'text/javascript; charset=utf-8']] as const) {
    const r = await rawGet(builtin.url, path);
    assert.equal(r.status, 200, path);
    assert.equal(r.headers['content-type'], type);
    assert.equal(r.body, readFileSync(join(BUILTIN_UI_DIR, file), 'utf8'));
  }
  for (const p of ['/ui/../package.json', '/ui/%2e%2e/package.json', '/ui/js/../../package.json', '/ui/nope.js', '/ui/.hidden']) {
    const r = await rawGet(builtin.url, p);
    assert.ok(r.status === 404, `${p}: ${r.status}`);
    assert.ok(!r.body.includes('"name": "gslbd"'), p);
  }
  // with no session the page redirects; with the system key (a bearer, as gslbctl would) it is served
  assert.equal((await rawGet(builtin.url, '/ui/')).status, 302);
  assert.equal((await rawGet(builtin.url, '/ui/', { authorization: `Bearer ${SYS}` })).status, 200);
  // the root sends browsers to the dashboard
  assert.equal((await rawGet(builtin.url, '/')).headers.location, '/ui/');
});

test('api.webuiPath that is not a directory stops the start, naming it', async () => {
  const missing = join(dir, 'no-such-folder');
  await assert.rejects(startTestDaemon({ api: { webuiPath: missing } } as never), new RegExp(`api\\.webuiPath: ${missing}: ENOENT`));
});
