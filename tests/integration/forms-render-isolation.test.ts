// test-timeout: 240000
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/proc.js';
import { addFormKey, publicClient } from './forms-fixture.js';

// Tenants' Liquid renders run in the render pool, off the main thread, bounded in time and per
// workspace (docs/forms.md "Templates", docs/security.md): one workspace's heavy previews do not
// hold another's form posts, the health endpoint, or (beyond one render) its own previews.

/** A template that runs for seconds inside one filter call, where liquidjs's own render limit does not reach. */
const HEAVY = "{% assign a = (1..3000000) %}{% assign b = a | where_exp: 'x', 'x > 5' %}{{ b.size }}";

test('six heavy previews of workspace A: B\'s form posts, its preview and GET /api/v1/health are answered while they run; each is ended at its limit and says so; a seventh is 429', async () => {
  const d = await startTestDaemon({
    forms: { defaultTier: 'business', rateLimits: { perIpPerMinute: 100_000 }, render: { workers: 2, timeoutMs: 3000, perTenant: 2, queuePerTenant: 4 } },
  } as never);
  try {
    const a = publicClient(d, addFormKey(d, { tenantId: 'render-a' }).key);
    const b = publicClient(d, addFormKey(d, { tenantId: 'render-b' }).key);
    const form = (await b('POST', '/form', { name: 'B contact' })).body.id as string;
    const pool = d.core.ports.forms!.deliveries.renders;
    const events: string[] = [];

    const heavy = Array.from({ length: 6 }, (_, i) => a('POST', '/email-template/preview', { body: HEAVY })
      .then((r) => { events.push(`A${i}`); return r; }));
    // the renders of A are running (both threads), the other four wait
    await waitFor(() => pool.stats('render-a').running === 2 && pool.stats('render-a').waiting === 4, 60_000);

    // a seventh is refused at once: 429 {name, message} with Retry-After
    const seventh = await a('POST', '/email-template/preview', { body: HEAVY });
    assert.equal(seventh.status, 429, JSON.stringify(seventh.body));
    assert.equal(seventh.body.name, 'rate_limited');
    assert.match(seventh.body.message, /too many template renders/);
    assert.equal(seventh.headers.get('retry-after'), '3');

    // B's form posts and the health endpoint are answered while A's renders still run
    const posts = await Promise.all(Array.from({ length: 3 }, (_, i) => fetch(`${d.url}/f/${form}`, {
      method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ email: `b${i}@example.com`, message: 'hello' }),
    })));
    for (const p of posts) assert.equal(p.status, 200, await p.text());
    events.push('B posts');
    assert.equal((await api(d.url, 'GET', '/api/v1/health')).status, 200);
    events.push('health');
    assert.ok(pool.stats('render-a').running > 0, 'A\'s renders were still running');
    // B's own preview takes the next free thread, ahead of A's waiting renders
    const mine = b('POST', '/email-template/preview', { body: '<p>{{ submission.name }}</p>', mock_data: { name: 'Bea' } })
      .then((r) => { events.push('B preview'); return r; });

    const answers = await Promise.all(heavy);
    const bp = await mine;
    assert.equal(bp.status, 200, JSON.stringify(bp.body));
    assert.equal(bp.body.html, '<p>Bea</p>');
    assert.deepEqual(events.slice(0, 2), ['B posts', 'health'], `answered before any render of A ended: ${events.join(' ')}`);
    assert.ok(events.indexOf('B preview') < events.length - 1, `B's preview before A's last render ended: ${events.join(' ')}`);
    // each is a template failure that names the limit: the pool's wall-clock limit (the thread
    // ended), or liquidjs's own when the filter call happened to finish first
    const ended = answers.filter((r) => /^body: template error: render time limit exceeded \(3000 ms\); the render was ended$/.test(String(r.body.message)));
    for (const r of answers) {
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.name, 'validation_error');
      assert.match(r.body.message, /^body: template error: .*limit exceeded/);
    }
    assert.ok(ended.length >= 1, 'renders were ended by the pool');
    assert.ok(pool.replaced >= ended.length, `every ended render's thread was replaced (${pool.replaced})`);
    assert.equal((await b('POST', '/email-template/preview', { body: '{{ 2 | plus: 2 }}' })).body.html, '4', 'the replacement threads render');
  } finally {
    await d.stop();
  }
});
