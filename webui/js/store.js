// The dashboard's copy of the running state: loaded from GET /snapshot, kept current by the live
// feed. Changes are batched: many messages within one animation frame become one notification per
// listener, carrying only what changed (the health of pool/IP pairs, the pools whose rows changed).

/** Key of one health entry: health is per pool and IP (docs/health.md "Targets"). */
export const hkey = (poolId, ip) => `${poolId}\n${ip}`;

export const store = {
  /** pool id → pool */
  pools: new Map(),
  /** pool id → members in storage order */
  members: new Map(),
  /** hkey → {healthy, score, lastChecked, rttMs} */
  health: new Map(),
  services: [],
  stats: null,
  /** the last health flips, newest first (overview) */
  recent: [],
};

const listeners = { health: new Set(), structure: new Set(), services: new Set(), stats: new Set() };

/** Subscribes to `health` (Set of hkeys), `structure` (Set of pool ids, or null for everything), `services`, `stats`. */
export function on(kind, fn) {
  listeners[kind].add(fn);
  return () => listeners[kind].delete(fn);
}

const emit = (kind, arg) => { for (const fn of listeners[kind]) fn(arg); };

/** Replaces everything with a snapshot document (gslb-api.md §2 "Snapshot"). */
export function loadSnapshot(doc) {
  store.pools = new Map(doc.pools.map((p) => [p.id, p]));
  store.members = new Map(doc.pools.map((p) => [p.id, (doc.members && doc.members[p.id]) || []]));
  store.health = new Map();
  for (const [poolId, byIp] of Object.entries(doc.healthStatus || {})) {
    for (const [ip, e] of Object.entries(byIp)) store.health.set(hkey(poolId, ip), e);
  }
  store.services = doc.services;
  store.stats = doc.stats;
  pendingHealth.clear();
  dirtyPools.clear();
  emit('structure', null);
  emit('services');
  emit('stats');
}

/** Health of a pool's IP; an IP with no entry counts as healthy (optimistic start, pools without a check). */
export function healthOf(poolId, ip) {
  return store.health.get(hkey(poolId, ip)) || { healthy: true, score: 1, lastChecked: 0, rttMs: 0 };
}

// ---- batching -------------------------------------------------------------------------------

const pendingHealth = new Map();
const dirtyPools = new Set();
let servicesDirty = false;
let scheduled = false;

function schedule() {
  if (scheduled) return;
  scheduled = true;
  // a hidden tab runs no animation frames: flush on a timer there, so nothing piles up
  if (document.hidden) setTimeout(flush, 250);
  else requestAnimationFrame(flush);
}

function flush() {
  scheduled = false;
  if (pendingHealth.size > 0) {
    const changed = new Set();
    for (const [k, p] of pendingHealth) {
      const prev = store.health.get(k);
      if (prev && prev.healthy !== p.healthy) {
        store.recent.unshift({ poolId: p.poolId, ip: p.ipAddress, healthy: p.healthy, at: p.timestamp });
      }
      store.health.set(k, { healthy: p.healthy, score: p.score, lastChecked: p.timestamp, rttMs: p.rttMs });
      changed.add(k);
    }
    if (store.recent.length > 20) store.recent.length = 20;
    pendingHealth.clear();
    emit('health', changed);
  }
  if (dirtyPools.size > 0) {
    const pools = new Set(dirtyPools);
    dirtyPools.clear();
    emit('structure', pools);
  }
  if (servicesDirty) { servicesDirty = false; emit('services'); }
}

// ---- live messages (gslb-api.md §6) -----------------------------------------------------------

/** A `health_update`: the latest per pool and IP wins until the next frame. `stale` ones (older than the entry) are dropped. */
export function queueHealth(p, { checkAge = false } = {}) {
  const k = hkey(p.poolId, p.ipAddress);
  if (checkAge) {
    const cur = store.health.get(k);
    if (cur && cur.lastChecked > p.timestamp) return;
  }
  const prev = store.health.get(k);
  // a first entry for an IP still counts as a flip when it says unhealthy
  if (!prev && !pendingHealth.has(k)) store.health.set(k, { healthy: true, score: 1, lastChecked: 0, rttMs: 0 });
  pendingHealth.set(k, p);
  schedule();
}

const sameMember = (a, b) => a.ipAddress === b.ipAddress && a.port === b.port && a.weight === b.weight &&
  a.priority === b.priority && a.enabled === b.enabled && a.rumUrl === b.rumUrl && a.origin === b.origin;

/** A `member_update`: created, updated or snapshot upsert the row; deleted removes it. */
export function applyMember({ action, poolId, member }) {
  const list = store.members.get(poolId);
  if (!list) return;
  const i = list.findIndex((m) => m.id === member.id);
  if (action === 'deleted') {
    if (i < 0) return;
    list.splice(i, 1);
  } else if (i >= 0) {
    if (sameMember(list[i], member)) return;
    list[i] = member;
  } else {
    list.push(member);
  }
  dirtyPools.add(poolId);
  schedule();
}

/** A `pool_update`. */
export function applyPool({ action, pool }) {
  if (action === 'deleted') {
    store.pools.delete(pool.id);
    store.members.delete(pool.id);
  } else {
    store.pools.set(pool.id, pool);
    if (!store.members.has(pool.id)) store.members.set(pool.id, []);
  }
  dirtyPools.add(pool.id);
  schedule();
}

/** A `service_update`. */
export function applyService({ action, service }) {
  const i = store.services.findIndex((s) => s.id === service.id);
  if (action === 'deleted') { if (i >= 0) store.services.splice(i, 1); }
  else if (i >= 0) store.services[i] = service;
  else store.services.push(service);
  servicesDirty = true;
  schedule();
}

/** A `stats_update`. */
export function applyStats(stats) {
  store.stats = stats;
  emit('stats');
}
