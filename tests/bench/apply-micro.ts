/**
 * `npm run bench:import-steps`: the steps of a first import of BENCH_SERVICES (default 100,000)
 * services of the bench:gitops repo (160,000 rows), one after the other in this one thread, each
 * timed in CPU over BENCH_ROUNDS rounds (default 3; min and median): what the offload worker does
 * (plan, plan id, encoding the changes for the handover) and what the main thread does (decoding
 * them, the next snapshot, the zone index, the DNS workers' index image, the rows in SQLite).
 * BENCH_ONLY (a comma list of `planId`, `wire`, `index`, `image`, `rows`) keeps only those of the
 * optional steps. The desired rows (YAML load and validation, ~20 s) are cached in BENCH_CACHE
 * (default the temp folder's gslbd-apply-micro-<n>.v8).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { serialize, deserialize } from 'node:v8';
import { repoFiles } from './gitops-repo.js';
import { loadManifests } from '../../gitops/load/manifest.js';
import { validateManifests } from '../../gitops/validate/validate.js';
import { validationEnv } from '../../gitops/validate/names.js';
import '../../runtime/kinds-all.js';
import { validateConfigObject } from '../../runtime/config/load.js';
import { planChanges } from '../../core/plan/plan.js';
import { planId } from '../../core/plan/plan-id.js';
import type { Change, DesiredRow } from '../../core/plan/types.js';
import { decodeChanges, encodeChanges, type WireChunk } from '../../gitops/offload/plan-wire.js';
import { SnapshotBuilder, emptySnapshot, getRow, type Snapshot } from '../../core/snapshot/snapshot.js';
import { buildZoneIndex } from '../../runtime/dns/zone-index.js';
import { IndexImageWriter } from '../../runtime/dns/index-image.js';
import { openDatabase } from '../../runtime/store/db.js';
import { ResourceStore } from '../../core/store/resources.js';
import { changeMutation } from '../../core/apply/apply.js';

const N = Number(process.env.BENCH_SERVICES ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ONLY = process.env.BENCH_ONLY?.split(',');
const cfg = validateConfigObject({ node: { id: 'bench' }, database: { path: ':memory:' }, dns: { domain: 'bench.test', port: 1 } });
const cache = process.env.BENCH_CACHE ?? join(tmpdir(), `gslbd-apply-micro-${N}.v8`);
let desired: DesiredRow[];
if (existsSync(cache)) desired = deserialize(readFileSync(cache)) as DesiredRow[];
else {
  const loaded = loadManifests(repoFiles(N).map((f) => ({ path: f.path, text: f.text })));
  desired = validateManifests(loaded.manifests, validationEnv(cfg, {})).desired;
  writeFileSync(cache, serialize(desired));
}

const times = new Map<string, number[]>();
function timed<T>(name: string, fn: () => T): T {
  const c0 = process.cpuUsage();
  const r = fn();
  const c = process.cpuUsage(c0);
  const list = times.get(name) ?? [];
  list.push((c.user + c.system) / 1000);
  times.set(name, list);
  return r;
}
const on = (name: string) => !ONLY || ONLY.includes(name);

const geo = { city: undefined, asn: undefined, endpointLocations: {} };
const empty = emptySnapshot();
const dir = mkdtempSync(join(tmpdir(), 'gslbd-micro-'));
try {
  for (let round = 0; round < ROUNDS; round++) {
    const plan = timed('plan (worker)', () => planChanges({ desired, actual: empty, revision: 'a'.repeat(40), newId: () => randomUUID(), tenantId: 'default', safety: cfg.gitops.safety }));
    const n = plan.changes.length;
    if (on('planId')) timed('planId (worker)', () => planId(plan));
    let changes: Change[] = plan.changes;
    const rowJson: (string | undefined)[] = [];
    if (on('wire')) {
      const chunks = timed('encode (worker)', () => { const out: WireChunk[] = []; for (let i = 0; i < n; i += 2000) out.push(encodeChanges(plan.changes, i, i + 2000)); return out; });
      changes = timed('decode', () => {
        const out: Change[] = [];
        for (const j of chunks) {
          const part = decodeChanges(j, (k, id) => getRow(empty, k, id))!;
          for (const c of part.changes) out.push(c);
          for (const t of part.rowJson) rowJson.push(t);
        }
        return out;
      });
    }
    const next: Snapshot = timed('snapshot', () => { const b = new SnapshotBuilder(empty); for (const c of changes) b.apply(changeMutation(c)); return b.build('x', Date.now()); });
    const ix = on('index') ? timed('zone index', () => buildZoneIndex(next, cfg, geo, 0, 1)) : undefined;
    // the DNS workers' index image of the import: what the main thread writes for them (compare + seal)
    if (on('image')) {
      const index = ix ?? buildZoneIndex(next, cfg, geo, 0, 1);
      const w = new IndexImageWriter();
      timed('index image', () => w.image(index));
    }
    if (on('rows')) {
      const db = openDatabase(join(dir, `r${round}.db`));
      const store = new ResourceStore(db);
      timed('rows', () => {
        const tx = store.begin();
        for (let i = 0; i < n; i += 64) store.writeChanges(changes, i, Math.min(n, i + 64), 1, rowJson.length ? rowJson : undefined);
        store.writeRevision(plan, 1, { planId: 'x' });
        tx.commit();
      });
      db.close();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`${N} services, ${ROUNDS} rounds: CPU ms, min / median`);
for (const [k, v] of times) console.log(`${k.padEnd(22)} ${Math.min(...v).toFixed(0).padStart(6)} ${med(v).toFixed(0).padStart(6)}`);
