// `npm run bench:ui`: the dashboard's pools view in headless Chromium against an in-process
// daemon. With BENCH_UI_POOLS pools (default 1,000) of BENCH_UI_MEMBERS members (default 10), each
// of BENCH_UI_ROUNDS rounds (default 5) signs in afresh, opens the pools view and reads the page's
// own marks (gslb:pools-first, gslb:pools-render), then sends 100 health flips a second for 3 s
// and times how long the page takes to show every fifth batch and, after the last, every final
// state. Prints each round and the medians. Figures in BENCHMARKS.md, "Dashboard".
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { api, startTestDaemon } from '../helpers/daemon.js';
import { flipFor, launchChromium, loadBulkPools, openBulkPools, signIn } from '../helpers/ui-bulk.js';

const POOLS = Number(process.env.BENCH_UI_POOLS ?? 1000);
const MEMBERS = Number(process.env.BENCH_UI_MEMBERS ?? 10);
const ROUNDS = Number(process.env.BENCH_UI_ROUNDS ?? 5);

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const admin = { email: 'admin@ui.bench', password: 'dashboard-bench-1' };
  const key = randomBytes(32).toString('hex');
  const d = await startTestDaemon({ auth: { bcryptCost: 10 }, logging: { format: 'json', level: 'warn' } } as never, { GSLB_API_KEY: key });
  const browser = await launchChromium();
  try {
    if ((await api(d.url, 'POST', '/api/v1/auth/setup', { ...admin, displayName: 'Bench' })).status !== 201) throw new Error('setup failed');
    const pools = loadBulkPools(d, POOLS, MEMBERS);
    console.log(`pools view: ${POOLS} pools x ${MEMBERS} members, ${ROUNDS} rounds; flips: 100/s for 3 s; load average ${loadavg()[0]!.toFixed(1)}`);
    console.log('round | first screen (pools) | all rows | batch shown after (ms) | all final states after');
    const firsts: number[] = [];
    const renders: number[] = [];
    const lagMax: number[] = [];
    const settles: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const { ctx, page } = await signIn(browser, d.url, admin);
      try {
        const { firstMs, renderMs, firstPools } = await openBulkPools(page, POOLS, 120_000);
        const { lags, settle } = await flipFor(d, page, pools, MEMBERS, 30_000);
        console.log(`${round} | ${firstMs.toFixed(0)} ms (${firstPools}) | ${renderMs.toFixed(0)} ms | ${lags.join(', ')} | ${settle} ms`);
        firsts.push(firstMs);
        renders.push(renderMs);
        lagMax.push(Math.max(...lags));
        settles.push(settle);
      } finally {
        await ctx.close();
      }
    }
    console.log(`median: first screen ${median(firsts).toFixed(0)} ms, all rows ${median(renders).toFixed(0)} ms (worst ${Math.max(...renders).toFixed(0)} ms), slowest batch ${median(lagMax)} ms, final states ${median(settles)} ms after the last flip`);
  } finally {
    await browser.close();
    await d.stop();
  }
}

main().catch((e: unknown) => { console.error(e); process.exit(1); });
