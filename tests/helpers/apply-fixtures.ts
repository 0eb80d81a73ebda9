import { SnapshotHolder } from '../../core/apply/apply.js';
import type { DesiredRow } from '../../core/plan/types.js';
import { EventBus } from '../../core/events/bus.js';
import { openDatabase } from '../../runtime/store/db.js';
import { ResourceStore } from '../../core/store/resources.js';
import { emptySnapshot } from '../../core/snapshot/snapshot.js';

/** Desired rows of `nPools` pools with `nMembers` members each (10.0.<pool>.<member>:80), every member of `weight`. */
export function desiredPools(nPools: number, nMembers: number, weight: number): DesiredRow[] {
  const out: DesiredRow[] = [];
  for (let p = 0; p < nPools; p++) {
    out.push({ kind: 'pool', key: `p${p}`, fields: { name: `p${p}` } });
    for (let m = 0; m < nMembers; m++) {
      out.push({ kind: 'member', key: `p${p}/10.0.${p}.${m}:80`, fields: { ipAddress: `10.0.${p}.${m}`, port: 80, weight, priority: 0, enabled: true, rumUrl: null }, refs: [{ field: 'poolId', kind: 'pool', key: `p${p}` }] });
    }
  }
  return out;
}

/** What the write path needs, on an in-memory database: store, snapshot holder, bus, and ids `<kind>-<n>`. */
export function memoryStore() {
  const db = openDatabase(':memory:');
  const store = new ResourceStore(db);
  const holder = new SnapshotHolder(emptySnapshot());
  const bus = new EventBus();
  let n = 0;
  const newId = (kind: string) => `${kind}-${++n}`;
  return { db, store, holder, bus, newId };
}
