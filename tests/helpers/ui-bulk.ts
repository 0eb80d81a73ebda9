import assert from 'node:assert/strict';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { planChanges } from '../../core/plan/plan.js';
import type { DesiredRow } from '../../core/plan/types.js';
import { rowsOf } from '../../core/snapshot/snapshot.js';
import type { PoolRow } from '../../core/model/types.js';
import type { TestDaemon } from './daemon.js';
import { WAIT_CEILING_MS } from './wait.js';

// The dashboard in headless Chromium against an in-process daemon, shared by the browser test
// (tests/integration/ui-dashboard.test.ts) and its benchmark (tests/bench/ui.ts): sign-in through
// the real page, many pools written in one plan, and health flips sent the way the checker sends
// them.

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

export interface SignedIn { ctx: BrowserContext; page: Page; errors: string[] }

/** A new browser context signed in through the real sign-in page, on the overview with the feed open. */
export async function signIn(browser: Browser, url: string, who: { email: string; password: string }): Promise<SignedIn> {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
  const page = await ctx.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('response', (r) => { if (r.status() >= 400 && r.url() !== `${url}/api/v1/auth/login`) errors.push(`${r.status()} ${r.url()}`); });
  // an unauthenticated visit to the dashboard is sent to the sign-in page
  await page.goto(`${url}/ui/`);
  assert.match(page.url(), /\/ui\/login\?next=%2Fui%2F$/);
  await page.getByLabel('E-mail').first().fill(who.email);
  await page.getByLabel('Password', { exact: true }).fill(who.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(`${url}/ui/`, { timeout: WAIT_CEILING_MS });
  await page.locator('#live[data-state="open"]').waitFor({ timeout: WAIT_CEILING_MS });
  return { ctx, page, errors };
}

/** Member `m` (0-based) of bulk pool `p`: 10.<p/256>.<p%256>.<m+1>. */
export const bulkIp = (p: number, m: number): string => `10.${p >> 8}.${p & 255}.${m + 1}`;

/** Writes `pools` pools named bulk-NNNN of `members` members each in one plan; returns their ids, in order. */
export function loadBulkPools(d: TestDaemon, pools: number, members: number): string[] {
  const desired: DesiredRow[] = [];
  for (let p = 0; p < pools; p++) {
    desired.push({ kind: 'pool', key: `bulk-${p}`, fields: { name: `bulk-${String(p).padStart(4, '0')}` } });
    for (let m = 0; m < members; m++) {
      const ip = bulkIp(p, m);
      desired.push({ kind: 'member', key: `bulk-${p}/${ip}:80`, fields: { ipAddress: ip, port: 80, weight: 1, priority: 0, enabled: true, rumUrl: null }, refs: [{ field: 'poolId', kind: 'pool', key: `bulk-${p}` }] });
    }
  }
  d.core.apply(planChanges({ desired, actual: d.core.holder.current, revision: 'bulk', newId: () => d.core.newId(), tenantId: 'default', origin: 'api' }));
  const byName = new Map([...rowsOf<PoolRow>(d.core.holder.current, 'pool').values()].map((p) => [p.name, p.id]));
  const ids = Array.from({ length: pools }, (_, p) => byName.get(`bulk-${String(p).padStart(4, '0')}`));
  assert.ok(ids.every(Boolean), 'every bulk pool was written');
  return ids as string[];
}

export interface Flip { poolId: string; ip: string; healthy: boolean }

/**
 * `n` health flips of `n` different members chosen at random, each the opposite of the member's
 * last state (kept in `last`), set in the health view and sent on the feed as the checker does.
 * Different members: a batch that flipped one member twice would expect its row to show both
 * states at once, and could never be seen as shown.
 */
function sendFlips(d: TestDaemon, poolIds: string[], members: number, last: Map<string, boolean>, n: number): Flip[] {
  assert.ok(n <= poolIds.length * members, `${n} different members out of ${poolIds.length * members}`);
  const batch: Flip[] = [];
  const picked = new Set<string>();
  while (batch.length < n) {
    const p = Math.floor(Math.random() * poolIds.length);
    const poolId = poolIds[p]!;
    const ip = bulkIp(p, Math.floor(Math.random() * members));
    const key = `${poolId}\n${ip}`;
    if (picked.has(key)) continue;
    picked.add(key);
    const healthy = !(last.get(key) ?? true);
    last.set(key, healthy);
    batch.push({ poolId, ip, healthy });
    const e = { healthy, score: healthy ? 1 : 0, lastChecked: Date.now(), rttMs: 2, node: 'test-node' };
    d.core.health.set(poolId, ip, e);
    d.core.bus.emit('ws_message', { type: 'health_update', payload: { poolId, ipAddress: ip, healthy, score: e.score, timestamp: e.lastChecked, rttMs: 2, node: 'test-node' } });
  }
  return batch;
}

/** The flips that `last` ends with, one per member. */
const finalStates = (last: Map<string, boolean>): Flip[] =>
  [...last].map(([k, healthy]) => ({ poolId: k.split('\n')[0]!, ip: k.split('\n')[1]!, healthy }));

/** In the page: whether every flip is what its member row shows (one pass over the rows). */
const SHOWN = (want: Flip[]): boolean => {
  const pools = new Set(want.map((x) => x.poolId));
  const shown = new Map<string, string | null>();
  for (const sec of document.querySelectorAll<HTMLElement>('#pool-list section.pool')) {
    if (!pools.has(sec.dataset.poolId!)) continue;
    for (const tr of sec.querySelectorAll<HTMLElement>('tr.member')) shown.set(`${sec.dataset.poolId}/${tr.dataset.ip}`, tr.dataset.health ?? null);
  }
  return want.every((x) => shown.get(`${x.poolId}/${x.ip}`) === (x.healthy ? 'healthy' : 'unhealthy'));
};

/** In the page: the flips its member rows do not show (at most 10), with what the rows show instead. */
const NOT_SHOWN = (want: Flip[]): string[] => {
  const out: string[] = [];
  for (const x of want) {
    const tr = document.querySelector<HTMLElement>(`#pool-list section.pool[data-pool-id="${x.poolId}"] tr.member[data-ip="${x.ip}"]`);
    const shown = tr ? tr.dataset.health ?? '(no data-health)' : '(no row)';
    if (shown !== (x.healthy ? 'healthy' : 'unhealthy')) out.push(`${x.poolId} ${x.ip}: want ${x.healthy ? 'healthy' : 'unhealthy'}, shows ${shown}`);
    if (out.length === 10) break;
  }
  return out;
};

/** Waits until the page shows every flip of `want`; a timeout names what `what` waited for and the flips not shown. */
async function untilShown(page: Page, want: Flip[], timeout: number, what: string): Promise<void> {
  try {
    await page.waitForFunction(SHOWN, want, { timeout, polling: 'raf' });
  } catch (err) {
    const missing = await page.evaluate(NOT_SHOWN, want).catch(() => ['(the page could not be read)']);
    throw new Error(`${what}: ${(err as Error).message.split('\n')[0]}; not shown: ${missing.join('; ')}`);
  }
}

export interface FlipRun { lags: number[]; settle: number; elapsedMs: number; want: Flip[] }

/**
 * 100 flips a second for 3 s (10 every 100 ms, members chosen at random) while `page` shows the
 * pools view: how long until the page shows every fifth batch (`lags`), and every final state after
 * the last (`settle`). A wait past `timeout` ms throws.
 */
export async function flipFor(d: TestDaemon, page: Page, poolIds: string[], members: number, timeout: number): Promise<FlipRun> {
  const last = new Map<string, boolean>();
  const lags: number[] = [];
  const start = Date.now();
  for (let tick = 0; tick < 30; tick++) {
    while (Date.now() < start + tick * 100) await new Promise((r) => setTimeout(r, 5));
    const batch = sendFlips(d, poolIds, members, last, 10);
    if (tick % 5 === 0) {
      const t = Date.now();
      await untilShown(page, batch, timeout, `batch ${tick + 1} of 30`);
      lags.push(Date.now() - t);
    }
  }
  const sent = Date.now();
  const want = finalStates(last);
  await untilShown(page, want, timeout, 'the final states after the last batch');
  return { lags, settle: Date.now() - sent, elapsedMs: sent - start, want };
}

/** Opens the pools view and waits until all `pools` sections are in the page; the page's own marks, in ms. */
export async function openBulkPools(page: Page, pools: number, timeout: number): Promise<{ firstMs: number; renderMs: number; firstPools: number }> {
  await page.getByRole('link', { name: 'Pools' }).click();
  await page.locator(`#pool-list[data-rendered="${pools}"]`).waitFor({ timeout }).catch(async (err: Error) => {
    const rendered = await page.locator('#pool-list').getAttribute('data-rendered').catch(() => '(unreadable)');
    throw new Error(`the pools view with ${pools} pools: ${err.message.split('\n')[0]}; data-rendered is ${rendered}`);
  });
  return page.evaluate(() => {
    const [first, all] = ['gslb:pools-first', 'gslb:pools-render'].map((n) => performance.getEntriesByName(n)[0] as PerformanceMeasure);
    return { firstMs: first!.duration, renderMs: all!.duration, firstPools: (first!.detail as { pools: number }).pools };
  });
}
