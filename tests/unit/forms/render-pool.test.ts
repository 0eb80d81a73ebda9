import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RenderPool } from '../../../runtime/forms/deliveries/render-pool.js';
import { RenderBusyError, TemplateError } from '../../../runtime/forms/deliveries/templates.js';
import type { RenderJob } from '../../../runtime/forms/deliveries/liquid-render.js';

// The render pool of tenants' templates (docs/forms.md "Templates"), with its real worker threads.
const job = (source: string, vars: Record<string, unknown> = {}): RenderJob => ({ kind: 'html', part: 'body', source, vars });
/** a template that runs for seconds inside one filter call, where liquidjs's own render limit does not reach */
const HEAVY = "{% assign a = (1..3000000) %}{% assign b = a | where_exp: 'x', 'x > 5' %}{{ b.size }}";

test('a render past its limit is ended (the thread terminated), fails as a template error, and the replacement thread renders', { timeout: 120_000 }, async () => {
  const pool = new RenderPool({ workers: 1, timeoutMs: 500, perTenant: 2, queuePerTenant: 4 });
  try {
    assert.equal(await pool.render('a', job('<b>{{ submission.x }}</b>', { submission: { x: '<i>' } })), '<b>&lt;i&gt;</b>');
    await assert.rejects(pool.render('a', job(HEAVY)), (err: unknown) => err instanceof TemplateError && err.permanent && /time limit exceeded/.test(err.message) && err.status === 400);
    assert.equal(pool.replaced, 1, 'the thread was terminated and replaced');
    assert.equal(await pool.render('a', job('{{ 1 | plus: 2 }}')), '3', 'the next render runs in a new thread');
    // liquidjs's own errors keep their message and line
    await assert.rejects(pool.render('a', job('{% if %}')), (err: unknown) => err instanceof TemplateError && /^body: template error at line 1/.test(err.message));
  } finally {
    await pool.close();
  }
});

test('per-tenant cap: a tenant runs at most perTenant renders; another tenant gets the next free thread', { timeout: 120_000 }, async () => {
  const pool = new RenderPool({ workers: 2, timeoutMs: 60_000, perTenant: 1, queuePerTenant: 4 });
  try {
    // Tenant a: two renders that wait on a thread for long; the cap lets one run.
    const order: string[] = [];
    const a1 = pool.render('a', job(HEAVY)).then(() => order.push('a1'), () => order.push('a1'));
    const a2 = pool.render('a', job(HEAVY)).then(() => order.push('a2'), () => order.push('a2'));
    assert.deepEqual(pool.stats('a'), { running: 1, waiting: 1 }, 'one of a runs, one waits though a thread is free');
    // b gets the free thread at once and finishes while a's first render still runs
    assert.equal(await pool.render('b', job('ok')), 'ok');
    order.push('b');
    assert.deepEqual(order, ['b'], 'b was answered before either render of a ended');
    await pool.close();
    await Promise.all([a1, a2]);
  } finally {
    await pool.close();
  }
});

test('queue limit: past perTenant + queuePerTenant a render is refused at once with RenderBusyError (429, Retry-After); other tenants are not', { timeout: 120_000 }, async () => {
  const pool = new RenderPool({ workers: 1, timeoutMs: 3_000, perTenant: 1, queuePerTenant: 2 });
  try {
    const held = [1, 2, 3].map(() => pool.render('a', job(HEAVY)).catch((err: unknown) => err));
    await assert.rejects(pool.render('a', job('x')), (err: unknown) => err instanceof RenderBusyError && err.status === 429 && err.retryAfterS === 3);
    const b = pool.render('b', job('fine'));
    for (const r of await Promise.all(held)) assert.ok(r instanceof TemplateError && /time limit exceeded/.test(r.message), String(r));
    assert.equal(await b, 'fine');
    assert.equal(pool.replaced, 3);
  } finally {
    await pool.close();
  }
});
