import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { Browser } from 'playwright-core';
import { startTestDaemon, api, type TestDaemon } from '../helpers/daemon.js';
import { stopHttpMember } from '../helpers/http-member.js';
import { startStaticBackends } from '../helpers/static-backends.js';
import { launchChromium, signIn } from '../helpers/ui-bulk.js';

// The dashboard (docs/ui.md "The static pool") in headless Chromium: the config file's static
// endpoints, two real HTTP backends, are the pool `static` with its two members and their live
// health, read-only, and counted on the overview.

const SYS = randomBytes(32).toString('hex');
const ADMIN = { email: 'admin@static.test', password: 'static-pool-pass-1' };
const A = '127.0.0.95';
const B = '127.0.0.96';

let d: TestDaemon;
let browser: Browser;
let servers: Map<string, Server>;

before(async () => {
  let port: number;
  ({ port, servers } = await startStaticBackends([A, B]));
  d = await startTestDaemon({
    auth: { bcryptCost: 10 },
    dns: { listenAddr: '127.0.0.1', port: 0, domain: 'static.example.test.' },
    loadbalancer: { endpoints: [A, B] },
    health: { enabled: true, type: 'http', port, checkinterval: '200ms', timeout: '150ms', http: { path: '/', expectedstatus: 200 } },
  } as never, { GSLB_API_KEY: SYS });
  assert.equal((await api(d.url, 'POST', '/api/v1/auth/setup', { ...ADMIN, displayName: 'Ada' })).status, 201);
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await d?.stop();
  for (const s of servers?.values() ?? []) await stopHttpMember(s);
});

test('the pools view lists the static pool with its 2 members and their live health; read-only; the overview counts it', async () => {
  const { ctx, page, errors } = await signIn(browser, d.url, ADMIN);
  try {
    await page.locator('#stats [data-stat="totalPools"] dd').waitFor();
    assert.equal(await page.locator('#stats [data-stat="totalPools"] dd').innerText(), '1');
    assert.equal(await page.locator('#stats [data-stat="totalMembers"] dd').innerText(), '2');

    await page.getByRole('link', { name: 'Pools' }).click();
    const section = page.locator('#pool-list section.pool[data-pool-id="static"]');
    await section.waitFor();
    assert.equal(await page.locator('#pool-list section.pool').count(), 1);
    assert.equal(await page.locator('#pool-count').innerText(), '1 pool');
    assert.equal(await section.locator('h2 > span').first().innerText(), 'static');
    assert.equal(await section.locator('h2 .tag').innerText(), 'config file');
    assert.match(await section.locator('p.muted').innerText(), /loadbalancer\.endpoints.*Read-only/s);
    const rows = section.locator('tr.member');
    assert.equal(await rows.count(), 2);
    assert.deepEqual(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-ip'))), [A, B]);
    // both probed healthy by the file's http check (a first probe within one interval)
    await page.waitForFunction(() => [...document.querySelectorAll('#pool-list section[data-pool-id="static"] tr.member')]
      .every((tr) => tr.getAttribute('data-health') === 'healthy'));
    assert.equal(await section.locator('.counts').innerText(), '2 of 2 enabled members healthy');
    // the admin may write pools, but these rows offer no action: they come from the config file
    assert.equal(await section.locator('button').count(), 0);

    await stopHttpMember(servers.get(B));
    servers.delete(B);
    const rowB = section.locator(`tr.member[data-ip="${B}"]`);
    await rowB.and(page.locator('[data-health="unhealthy"]')).waitFor({ timeout: 0 });
    assert.equal(await rowB.locator('.badge').innerText(), 'unhealthy');
    assert.equal(await section.locator(`tr.member[data-ip="${A}"]`).getAttribute('data-health'), 'healthy');
    assert.equal(await section.locator('.counts').innerText(), '1 of 2 enabled members healthy');

    // the overview's recent changes name the pool, not a bare id
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.locator('#recent li', { hasText: `${B} in static` }).waitFor({ timeout: 0 });
    assert.deepEqual(errors, []);
  } finally {
    await ctx.close();
  }
});
