/**
 * `npm run bench:index-image`: what the shared index image (runtime/dns/index-image.ts, read by
 * the DNS workers through index-view.ts) costs and saves, at BENCH_SERVICES services (default
 * 100,000; ten per pool, four members per pool). The main thread's side: writing the whole image,
 * and the image of a one-row write (a service's TTL; a member added). A worker's side: taking an
 * image, decoding every name (a first query of each), the lookup cost once decoded against the
 * main thread's ZoneIndex, and the heap a worker holds: before the image each worker built a
 * snapshot of the DNS rows and its own zone index per apply. CPU time of this thread; heap after a
 * full GC (run with --expose-gc).
 */
import { validateConfigObject } from '../../runtime/config/load.js';
import { emptySnapshot, nextSnapshot, type RowMutation } from '../../core/snapshot/snapshot.js';
import type { MemberRow, PoolRow, Row, ServiceRow } from '../../core/model/types.js';
import { NameMatch, buildZoneIndex, lookupName, type NameIndex, type ZoneIndex } from '../../runtime/dns/zone-index.js';
import { IndexImageWriter, type IndexImage } from '../../runtime/dns/index-image.js';
import { IndexView } from '../../runtime/dns/index-view.js';

const N = Number(process.env.BENCH_SERVICES ?? 100_000);
const meta = { origin: 'git' as const, revision: 'r', tenantId: 'default' };
const cfg = validateConfigObject({ dns: { domain: 'bench.test' } });
const geo = { city: undefined, asn: undefined, endpointLocations: {} };
const gc = (globalThis as { gc?: () => void }).gc;

function rows(): Row[] {
  const out: Row[] = [];
  for (let p = 0; p < N / 10; p++) {
    out.push({ kind: 'pool', id: `p${p}`, name: `p${p}`, ...meta } as PoolRow);
    for (let m = 1; m <= 4; m++) out.push({ kind: 'member', id: `m${p}-${m}`, poolId: `p${p}`, ipAddress: `10.${(p >> 8) & 255}.${p & 255}.${m}`, port: 80, weight: 1, priority: 0, enabled: true, rumUrl: null, ...meta } as MemberRow);
  }
  for (let i = 0; i < N; i++) out.push(service(i, 60));
  return out;
}
function service(i: number, ttl: number): ServiceRow {
  return { kind: 'service', id: `s${i}`, name: `svc-${i}`, domain: `svc-${i}.bench.test.`, algorithm: 'round-robin', ttl, poolId: `p${Math.floor(i / 10)}`, chain: [], whenAllUnhealthy: 'all', asnRules: [], ...meta };
}
const puts = (rs: Row[]): RowMutation[] => rs.map((row) => ({ op: 'put' as const, row }));

/** CPU ms of `fn`, and its result. */
function cpu<T>(fn: () => T): [number, T] {
  const c = process.cpuUsage();
  const r = fn();
  const d = process.cpuUsage(c);
  return [(d.user + d.system) / 1000, r];
}
/** Heap MB `fn`'s result keeps alive (after full GCs). */
function heapOf<T>(fn: () => T): [number, T] {
  gc?.(); gc?.();
  const before = process.memoryUsage().heapUsed;
  const r = fn();
  gc?.(); gc?.();
  return [(process.memoryUsage().heapUsed - before) / 2 ** 20, r];
}
const ms = (x: number) => `${x.toFixed(1)} ms`;
const mb = (x: number) => `${x.toFixed(1)} MB`;
const bytes = (img: IndexImage) => [...img.names, ...img.pools].reduce((k, [, b]) => k + (b?.byteLength ?? 0), 0);
const names = Array.from({ length: N }, (_, i) => `svc-${i}.bench.test.`);
function lookups(ix: NameIndex): number {
  const m = new NameMatch();
  let found = 0;
  for (const n of names) if (lookupName(ix, n, m).plan) found++;
  return found;
}

console.log(`index image bench: ${N.toLocaleString('en')} services, node ${process.version}${gc ? '' : ' (no --expose-gc: heap figures are rough)'}`);
const all = rows();
const [heapWorkerBefore, ix] = heapOf(() => {
  const s = nextSnapshot(emptySnapshot(), puts(all), 'r1', 1);
  return buildZoneIndex(s, cfg, geo, 0, 1);
});
const [buildMs] = cpu(() => buildZoneIndex(ix.snapshot, cfg, geo, 0, 2));
const w = new IndexImageWriter();
const [fullMs, full] = cpu(() => { const s = w.image(ix); w.commit(s); return w.full(); });
console.log('| what | figure |');
console.log('|---|---|');
console.log(`| zone index build, all services (what each worker did per large apply before) | ${ms(buildMs)} |`);
console.log(`| main thread: whole image written (compare + seal) | ${ms(fullMs)}; ${mb(bytes(full) / 2 ** 20)} in ${full.names.length + full.pools.length} shards |`);

/** One write: the next index (the main thread builds it anyway) and its image. */
function write(prev: ZoneIndex, muts: RowMutation[], serial: number): { ix: ZoneIndex; image: IndexImage; imageMs: number } {
  const s = nextSnapshot(prev.snapshot, muts, 'r', 2);
  const next = buildZoneIndex(s, cfg, geo, 0, serial, prev);
  const [imageMs, image] = cpu(() => { const sealed = w.image(next); w.commit(sealed); return sealed.image; });
  return { ix: next, image, imageMs };
}
const ttl = write(ix, puts([service(123, 30)]), 3);
console.log(`| main thread: image of a one-row write (a service's TTL) | ${ms(ttl.imageMs)}; ${ttl.image.names.length} name shard, ${ttl.image.pools.length} pool shards, ${(bytes(ttl.image) / 1024).toFixed(1)} KB |`);
const member = write(ttl.ix, puts([{ kind: 'member', id: 'm-new', poolId: 'p7', ipAddress: '10.0.7.9', port: 80, weight: 1, priority: 0, enabled: true, rumUrl: null, ...meta } as MemberRow]), 4);
console.log(`| main thread: image of a member added | ${ms(member.imageMs)}; ${member.image.names.length} name shards, ${member.image.pools.length} pool shard, ${(bytes(member.image) / 1024).toFixed(1)} KB |`);

const [takeUs, view] = cpu(() => new IndexView(cfg, geo, w.full()));
console.log(`| worker: take the whole image | ${ms(takeUs)} |`);
const [firstMs, found] = cpu(() => lookups(view));
if (found !== N) throw new Error(`view found ${found} of ${N}`);
console.log(`| worker: first query of every name (decodes every shard, makes every plan) | ${ms(firstMs)} |`);
const [deltaMs] = cpu(() => view.apply(ttl.image));
console.log(`| worker: take a one-row write's image | ${ms(deltaMs)} |`);
lookups(view);
const per = (ix2: NameIndex) => { lookups(ix2); const [t] = cpu(() => { for (let r = 0; r < 5; r++) lookups(ix2); }); return (t * 1e6) / (5 * N); };
console.log(`| lookup, warm: main thread's ZoneIndex / worker's view | ${per(member.ix).toFixed(0)} ns / ${per(view).toFixed(0)} ns |`);
const [heapView] = heapOf(() => { const v = new IndexView(cfg, geo, w.full()); lookups(v); return v; });
const HOT = 1000;
const [heapHot, hot] = heapOf(() => { const v = new IndexView(cfg, geo, w.full()); const m = new NameMatch(); for (let i = 0; i < HOT; i++) lookupName(v, names[(i * 7919) % N]!, m); return v; });
const d = hot.decodedShards();
console.log(`| worker heap: snapshot + zone index (before) / view, every name queried / view, ${HOT.toLocaleString('en')} names queried (${d.names} name shards decoded) | ${mb(heapWorkerBefore)} / ${mb(heapView)} / ${mb(heapHot)} |`);
