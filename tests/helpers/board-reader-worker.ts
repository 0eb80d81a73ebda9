import { parentPort, workerData } from 'node:worker_threads';
import { HealthBoardReader, type HealthBoardBuffers } from '../../runtime/dns/health-board.js';
import { HEALTH_READ_MAX_WAIT_MS, refreshHealth, type MemberBase, type ServicePlan } from '../../runtime/dns/service-plan.js';

/**
 * A reader of the health board in its own thread, for tests/unit/dns/health-board.test.ts: it
 * refreshes one plan of `members` addresses of pool `p` in a loop until told `stop` (or for at
 * most 120 s), and reports how many refreshes it committed with every member healthy, with none,
 * and mixed (a torn read), and how many it took after waiting HEALTH_READ_MAX_WAIT_MS for an uninterrupted read
 * (`forced`: such a read may mix two batches by design, so it is counted apart and not classified).
 * It posts `busy` once it has committed 20 refreshes while the board was being written.
 */
const { board, members } = workerData as { board: HealthBoardBuffers; members: number };
const health = new HealthBoardReader(board);
const base: MemberBase[] = Array.from({ length: members }, (_, i) => ({
  ip: `10.1.${i >> 8}.${i & 255}`, family: 4, order: i, weight: 1, priority: 0, rumUrl: null, lat: NaN, lon: NaN, rdata: Buffer.alloc(4),
}));
const plan = { poolId: 'p', members: base, healthVersion: -1, healthWaitSince: -1, v4: { enabled: [], healthy: [] }, v6: { enabled: [], healthy: [] } } as unknown as ServicePlan;
let stop = false;
parentPort!.on('message', () => { stop = true; });
const counts = { all: 0, none: 0, mixed: 0, refreshes: 0, forced: 0 };
const until = Date.now() + 120_000;
// the first read is taken whatever happens meanwhile: it is done before the writes begin
refreshHealth(plan, health);
parentPort!.postMessage('ready');
const loop = () => {
  for (let i = 0; i < 200; i++) {
    const before = plan.healthVersion;
    const waited = plan.healthWaitSince >= 0 ? performance.now() - plan.healthWaitSince : 0;
    refreshHealth(plan, health);
    if (plan.healthVersion === before) continue;
    counts.refreshes++;
    if (counts.refreshes === 20) parentPort!.postMessage('busy');
    if (waited >= HEALTH_READ_MAX_WAIT_MS) { counts.forced++; continue; }
    const n = plan.v4.healthy.length;
    if (n === members) counts.all++;
    else if (n === 0) counts.none++;
    else counts.mixed++;
  }
  if (stop || Date.now() > until) parentPort!.postMessage(counts);
  else setImmediate(loop);
};
loop();
