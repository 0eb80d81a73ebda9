import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { startTestDaemon, api, type TestDaemon } from '../helpers/daemon.js';
import { startHttpMember, stopHttpMember } from '../helpers/http-member.js';
import { flipFor, launchChromium, loadBulkPools, openBulkPools, signIn as signInAs, type SignedIn } from '../helpers/ui-bulk.js';
import { WAIT_CEILING_MS, waitUntil } from '../helpers/wait.js';

// The web dashboard (docs/ui.md) in headless Chromium against a real daemon: sign-in through the
// real /ui/login page, live member health from a real HTTP health check, roles, themes, page
// weight, and 1,000 pools of 10 members with 100 health flips a second.

const ARTIFACTS = join(process.cwd(), 'tests', 'artifacts');
const SYS = randomBytes(32).toString('hex');
const ADMIN = { email: 'admin@ui.test', password: 'dashboard-pass-1' };
const VIEWER = { email: 'viewer@ui.test', password: 'viewer-pass-12' };
const INTERVAL = 300;
const TIMEOUT = 200;

let d: TestDaemon;
let browser: Browser;
const sys = { authorization: `Bearer ${SYS}` };

before(async () => {
  d = await startTestDaemon({ auth: { bcryptCost: 10 } } as never, { GSLB_API_KEY: SYS });
  assert.equal((await api(d.url, 'POST', '/api/v1/auth/setup', { ...ADMIN, displayName: 'Ada' })).status, 201);
  assert.equal((await api(d.url, 'POST', '/api/v1/users', { ...VIEWER, displayName: 'Vic', role: 'viewer' }, sys)).status, 201);
  browser = await launchChromium();
  mkdirSync(ARTIFACTS, { recursive: true });
});
after(async () => {
  await browser?.close();
  await d?.stop();
});

const signIn = (who: { email: string; password: string }): Promise<SignedIn> => signInAs(browser, d.url, who);

const rowOf = (page: Page, ip: string, port: number) => page.locator(`#pool-list tr.member[data-ip="${ip}"]`).filter({ hasText: `${ip}:${port}` });

/** The badge colour of a member row, as computed by the browser. */
const badgeColour = (page: Page, ip: string, port: number) => rowOf(page, ip, port).locator('.badge').evaluate((el) => getComputedStyle(el).color);

async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `ui-${name}.png`), fullPage: false });
}

test('sign in through /ui/login, land on the overview; the page carries a strict CSP and runs no inline script', async () => {
  const { ctx, page, errors } = await signIn(ADMIN);
  try {
    await page.locator('#stats [data-stat="totalPools"] dd').waitFor();
    assert.equal(await page.title(), 'Overview · gslbd');
    assert.equal(await page.locator('#nav a[aria-current="page"]').innerText(), 'Overview');
    assert.equal(await page.locator('#who').innerText(), ADMIN.email);
    const res = await page.request.get(`${d.url}/ui/`);
    const csp = res.headers()['content-security-policy'] ?? '';
    assert.match(csp, /script-src 'self'/);
    assert.ok(!csp.includes('unsafe-inline'));
    assert.equal(res.headers()['cache-control'], 'no-cache');
    assert.ok(!(await res.text()).match(/<script>(?!<\/script>)/), 'no inline script in the page');
    // the admin sees the admin views
    for (const v of ['GitOps', 'Users', 'Settings']) assert.equal(await page.getByRole('link', { name: v }).isVisible(), true, v);
    assert.deepEqual(errors, []);
  } finally {
    await ctx.close();
  }
});

test('a member backed by a real HTTP server turns red when it stops and green when it restarts, without a reload', async () => {
  const member = await startHttpMember('127.0.0.1');
  const port = (member.address() as AddressInfo).port;
  let restarted: Server | undefined;
  const pool = (await api(d.url, 'POST', '/api/v1/pools', { name: 'web-live' }, sys)).body;
  assert.equal((await api(d.url, 'POST', `/api/v1/pools/${pool.id}/members`, { ipAddress: '127.0.0.1', port }, sys)).status, 201);
  assert.equal((await api(d.url, 'PUT', `/api/v1/pools/${pool.id}/healthcheck`, { type: 'http', port, httpPath: '/', intervalMs: INTERVAL, timeoutMs: TIMEOUT }, sys)).status, 200);
  const { ctx, page, errors } = await signIn(ADMIN);
  try {
    await page.getByRole('link', { name: 'Pools' }).click();
    const row = rowOf(page, '127.0.0.1', port);
    await row.waitFor();
    await page.waitForFunction(() => document.querySelector('#pool-list tr.member[data-ip="127.0.0.1"]')?.getAttribute('data-health') === 'healthy');
    const green = await badgeColour(page, '127.0.0.1', port);
    assert.equal(green, 'rgb(20, 108, 46)');
    await page.evaluate(() => { (window as unknown as { marker: number }).marker = 42; });

    await stopHttpMember(member);
    // how soon is printed next to what it should take (interval + timeout + 3 s); a loaded machine
    // may take longer, which is no failure
    const budget = INTERVAL + TIMEOUT + 3000;
    const t0 = Date.now();
    await row.and(page.locator('[data-health="unhealthy"]')).waitFor({ timeout: WAIT_CEILING_MS });
    const down = Date.now() - t0;
    assert.equal(await badgeColour(page, '127.0.0.1', port), 'rgb(179, 38, 30)');
    assert.equal(await row.locator('.badge').innerText(), 'unhealthy');
    assert.match(await page.locator('#announce').innerText(), /1 member turned unhealthy/);
    await shoot(page, 'pools-member-down-light');

    restarted = await startHttpMember('127.0.0.1', port);
    const t1 = Date.now();
    await row.and(page.locator('[data-health="healthy"]')).waitFor({ timeout: WAIT_CEILING_MS });
    const up = Date.now() - t1;
    assert.equal(await badgeColour(page, '127.0.0.1', port), 'rgb(20, 108, 46)');
    assert.equal(await page.evaluate(() => (window as unknown as { marker?: number }).marker), 42, 'the page was not reloaded');
    console.log(`# member down shown after ${down} ms, up after ${up} ms (budget ${budget} ms)`);
    assert.deepEqual(errors, []);
  } finally {
    await ctx.close();
    await stopHttpMember(member);
    await stopHttpMember(restarted);
    await api(d.url, 'DELETE', `/api/v1/pools/${pool.id}`, undefined, sys);
  }
});

test('screenshots of the overview, pools and GitOps views in both themes; the toggle is remembered', async () => {
  const pool = (await api(d.url, 'POST', '/api/v1/pools', { name: 'eu-west <b>bold</b>' }, sys)).body;
  for (const [i, ip] of ['192.0.2.10', '192.0.2.11', '192.0.2.12'].entries()) {
    await api(d.url, 'POST', `/api/v1/pools/${pool.id}/members`, { ipAddress: ip, port: 443, weight: i + 1, priority: i + 1 }, sys);
  }
  await api(d.url, 'POST', '/api/v1/services', { name: 'www', domain: 'www.ui.example.test.', poolId: pool.id, algorithm: 'failover' }, sys);
  d.core.health.set(pool.id, '192.0.2.11', { healthy: false, score: 0, lastChecked: Date.now(), rttMs: 4, node: 'test-node' });
  const { ctx, page, errors } = await signIn(ADMIN);
  try {
    for (const theme of ['light', 'dark']) {
      if (theme === 'dark') {
        await page.getByRole('button', { name: 'Dark theme' }).click();
        assert.equal(await page.getByRole('button', { name: 'Dark theme' }).getAttribute('aria-pressed'), 'true');
      }
      await page.goto(`${d.url}/ui/#overview`);
      await page.locator('#stats [data-stat="totalPools"] dd').waitFor();
      await shoot(page, `overview-${theme}`);
      await page.getByRole('link', { name: 'Pools' }).click();
      // the markup in the name is shown as text, never parsed. Read in one evaluation in the page:
      // the list may be built again while the view opens, so a locator found first and read after
      // can meet a section being replaced (it read as empty)
      await page.waitForFunction((n) => [...document.querySelectorAll<HTMLElement>('#pool-list section.pool h2 span')]
        .some((s) => s.innerText === n && s.checkVisibility()), 'eu-west <b>bold</b>', { timeout: WAIT_CEILING_MS });
      assert.equal(await page.locator('#pool-list b').count(), 0);
      await shoot(page, `pools-${theme}`);
      await page.getByRole('link', { name: 'GitOps' }).click();
      await page.locator('#gitops-off').waitFor();
      assert.match(await page.locator('#gitops-off').innerText(), /GitOps not configured/);
      await shoot(page, `gitops-${theme}`);
      await page.getByRole('link', { name: 'Services' }).click();
      await page.getByLabel('Client IP').fill('198.51.100.7');
      await page.getByRole('button', { name: 'Simulate' }).click();
      await page.locator('#sim-result .steps li').first().waitFor();
      assert.match(await page.locator('#sim-result').innerText(), /NOERROR[\s\S]*192\.0\.2\.10/);
      await shoot(page, `services-${theme}`);
    }
    // the choice survives a reload
    await page.reload();
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(bg, 'rgb(18, 20, 23)');
    assert.deepEqual(errors, []);
  } finally {
    await ctx.close();
    await api(d.url, 'DELETE', `/api/v1/pools/${pool.id}`, undefined, sys);
  }
});

test('a viewer sees no write controls and no admin-only views', async () => {
  const pool = (await api(d.url, 'POST', '/api/v1/pools', { name: 'viewer-pool' }, sys)).body;
  await api(d.url, 'POST', `/api/v1/pools/${pool.id}/members`, { ipAddress: '192.0.2.20', port: 80 }, sys);
  const admin = await signIn(ADMIN);
  const viewer = await signIn(VIEWER);
  try {
    await admin.page.getByRole('link', { name: 'Pools' }).click();
    await admin.page.locator('#pool-list tr.member').first().waitFor();
    assert.ok(await admin.page.locator('#pool-list tr.member button').count() > 0, 'the admin has the member buttons');
    // the admin disables the member; the viewer's page follows through the feed
    await admin.page.getByRole('button', { name: /Disable member 192\.0\.2\.20:80/ }).click();

    const p = viewer.page;
    await p.getByRole('link', { name: 'Pools' }).click();
    await p.locator('#pool-list tr.member[data-enabled="false"]').waitFor({ timeout: WAIT_CEILING_MS });
    assert.equal(await p.locator('main button:not(#simulate button)').count(), 0, 'no write button anywhere in the pools view');
    assert.equal(await p.locator('#pool-list th', { hasText: 'Actions' }).count(), 0);
    assert.equal(await p.getByRole('link', { name: 'Settings' }).count(), 0);
    assert.equal(await p.getByRole('link', { name: 'Users' }).isVisible(), true, 'viewers hold users:read');
    await p.getByRole('link', { name: 'GitOps' }).click();
    await p.locator('#gitops-off').waitFor();
    assert.equal(await p.getByRole('button', { name: 'Reconcile now' }).count(), 0);
    // a hash naming a view the viewer may not see shows the overview
    await p.goto(`${d.url}/ui/#settings`);
    await p.locator('#view-overview:not([hidden])').waitFor();
    assert.deepEqual([...admin.errors, ...viewer.errors], []);
  } finally {
    await admin.ctx.close();
    await viewer.ctx.close();
    await api(d.url, 'DELETE', `/api/v1/pools/${pool.id}`, undefined, sys);
  }
});

test('page weight: the dashboard\'s own files are under 200 KB', async () => {
  // a first visit in a fresh context (empty cache: every file is sent in full), signed in by cookie
  const token = (await api(d.url, 'POST', '/api/v1/auth/login', ADMIN)).body.token as string;
  const ctx = await browser.newContext();
  await ctx.addCookies([{ name: 'gslb_session', value: token, url: d.url }]);
  const page = await ctx.newPage();
  try {
    const sizes = new Map<string, number>();
    page.on('requestfinished', (req) => {
      const u = new URL(req.url());
      if (!u.pathname.startsWith('/ui/')) return;
      void req.sizes().then((s) => sizes.set(u.pathname, s.responseBodySize + s.responseHeadersSize));
    });
    await page.goto(`${d.url}/ui/#pools`);
    await page.locator('#live[data-state="open"]').waitFor();
    // the sizes arrive with each request's end: wait for the files the page cannot do without
    await waitUntil('the sizes of main.js and app.css', () => sizes.has('/ui/js/main.js') && sizes.has('/ui/app.css'), { describe: () => [...sizes.keys()] });
    const total = [...sizes.values()].reduce((a, b) => a + b, 0);
    console.log(`# dashboard files: ${sizes.size}, ${total} bytes transferred`);
    assert.ok(sizes.has('/ui/js/main.js') && sizes.has('/ui/app.css'), [...sizes.keys()].join(' '));
    assert.ok(total < 200 * 1024, `${total} bytes`);
  } finally {
    await ctx.close();
  }
});

/**
 * In the page: from now on, which member rows and pool counts change, and any other change to the
 * list (a section built again, a row added or removed), until TAKE.
 */
const WATCH = () => {
  const rows = new Set<string>();
  const counts = new Set<string>();
  const elsewhere: string[] = [];
  const obs = new MutationObserver((recs) => {
    for (const r of recs) {
      const el = r.target instanceof Element ? r.target : r.target.parentElement!;
      const sec = el.closest<HTMLElement>('section.pool');
      const tr = el.closest<HTMLElement>('tr.member');
      if (sec && tr) rows.add(`${sec.dataset.poolId}/${tr.dataset.ip}`);
      else if (sec && el.closest('.counts')) counts.add(sec.dataset.poolId!);
      else elsewhere.push(`${r.type} on <${el.tagName.toLowerCase()} id="${el.id}" class="${el.className}">`);
    }
  });
  obs.observe(document.getElementById('pool-list')!, { subtree: true, childList: true, attributes: true, characterData: true });
  (window as unknown as { __flipWatch: unknown }).__flipWatch = { obs, rows, counts, elsewhere };
};
/** In the page: what the watch saw, and the watch stopped (records reach it at the end of the task that made them, so by now all have). */
const TAKE = () => {
  const w = (window as unknown as { __flipWatch: { obs: MutationObserver; rows: Set<string>; counts: Set<string>; elsewhere: string[] } }).__flipWatch;
  w.obs.disconnect();
  return { rows: [...w.rows], counts: [...w.counts], elsewhere: w.elsewhere };
};

// What "renders in under 1 s and keeps up with 100 flips a second" rests on, asserted as
// behaviour: the list is built in slices, so the first screen is painted before the rest is
// built; and a flip repaints its own member row and its pool's counts and nothing else, so the
// work per flip does not grow with the list and no backlog can build up. The times are printed
// here and measured, several runs at a time, by `npm run bench:ui` (BENCHMARKS.md, docs/ui.md);
// a shared test machine is too noisy to hold them to a bound.
test('1,000 pools of 10 members render in slices, and 100 health flips a second repaint only their own rows', async () => {
  const POOLS = 1000;
  const MEMBERS = 10;
  const pools = loadBulkPools(d, POOLS, MEMBERS);
  const { ctx, page, errors } = await signIn(ADMIN);
  try {
    const { firstMs, renderMs, firstPools } = await openBulkPools(page, POOLS, 60_000);
    assert.equal(await page.locator('#pool-list tr.member').count(), POOLS * MEMBERS);
    console.log(`# pools view: ${POOLS} pools x ${MEMBERS} members: first screen (${firstPools} pools) painted after ${firstMs.toFixed(0)} ms, all rows in the page after ${renderMs.toFixed(0)} ms`);
    assert.ok(firstPools > 0 && firstPools < POOLS, `the first screen held ${firstPools} of ${POOLS} pools: built in slices`);
    assert.ok(firstMs <= renderMs, `first screen after ${firstMs} ms, all after ${renderMs} ms`);

    // 100 flips a second for 3 s, watched
    await page.evaluate(WATCH);
    const { lags, settle, elapsedMs, want } = await flipFor(d, page, pools, MEMBERS, WAIT_CEILING_MS);
    console.log(`# 300 flips over ${(elapsedMs / 1000).toFixed(1)} s (${(300_000 / elapsedMs).toFixed(0)}/s): shown after ${lags.join(', ')} ms; all ${want.length} final states shown ${settle} ms after the last`);

    const seen = await page.evaluate(TAKE);
    assert.deepEqual(seen.elsewhere, [], 'a flip changed nothing in the list but member rows and pool counts');
    const flipped = new Set(want.map((x) => `${x.poolId}/${x.ip}`));
    const strays = seen.rows.filter((k) => !flipped.has(k));
    assert.deepEqual(strays, [], 'only the flipped members\' rows were repainted');
    const repainted = new Set(seen.rows);
    assert.deepEqual(want.filter((x) => !x.healthy && !repainted.has(`${x.poolId}/${x.ip}`)), [], 'every member that ended unhealthy had its row repainted');
    const flippedPools = new Set(want.map((x) => x.poolId));
    assert.deepEqual(seen.counts.filter((p) => !flippedPools.has(p)), [], 'only the flipped members\' pools had their counts repainted');
    assert.deepEqual(errors, []);
  } finally {
    await ctx.close();
  }
});
