import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { api, startTestDaemon } from '../helpers/daemon.js';
import { runEntry } from '../helpers/proc.js';

test('gslbctl apikey create, list and delete against a daemon; the secret is printed once and works on /public/v1', async () => {
  const SYS = randomBytes(32).toString('hex');
  const d = await startTestDaemon({}, { GSLB_API_KEY: SYS });
  const env = { NO_COLOR: '1', GSLB_API_KEY: SYS, GSLB_SERVER: d.url };
  try {
    const made = await runEntry('gslbctl', ['apikey', 'create', 'site', '--scopes', 'forms:read,forms:write'], env);
    assert.equal(made.code, 0, made.stderr);
    const key = /gslbf_[A-Za-z0-9_-]{43}/.exec(made.stdout)?.[0];
    assert.ok(key, made.stdout);
    assert.match(made.stdout, /shown once/);
    assert.equal((await api(d.url, 'GET', '/public/v1/form', undefined, { authorization: `Bearer ${key}` })).status, 200);

    const listed = await runEntry('gslbctl', ['apikey', 'list', '-o', 'json'], env);
    assert.equal(listed.code, 0, listed.stderr);
    const keys = JSON.parse(listed.stdout) as { id: string; name: string; scopes: string[] }[];
    assert.deepEqual(keys.map((k) => [k.name, k.scopes]), [['site', ['forms:read', 'forms:write']]]);
    assert.ok(!listed.stdout.includes(key));
    const text = await runEntry('gslbctl', ['apikey', 'list'], env);
    assert.match(text.stdout, /^ID +NAME +SCOPES/);

    // refused input: exit 2 with the daemon's message; usage errors too
    const bad = await runEntry('gslbctl', ['apikey', 'create', 'x', '--scopes', 'pools:write'], env);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /HTTP 400: .*scopes/);
    assert.equal((await runEntry('gslbctl', ['apikey', 'create', 'x'], env)).code, 2);
    assert.equal((await runEntry('gslbctl', ['apikey', 'rotate'], env)).code, 2);

    const del = await runEntry('gslbctl', ['apikey', 'delete', keys[0]!.id], env);
    assert.equal(del.code, 0, del.stderr);
    assert.equal((await api(d.url, 'GET', '/public/v1/form', undefined, { authorization: `Bearer ${key}` })).status, 401);
    assert.equal((await runEntry('gslbctl', ['apikey', 'delete', keys[0]!.id], env)).code, 2);
  } finally {
    await d.stop();
  }
});
