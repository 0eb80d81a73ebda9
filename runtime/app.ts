import { randomUUID } from 'node:crypto';
import type { Config } from './config/types.js';
import type { Logger } from './log/logger.js';
import { openDatabase, type Db } from './store/db.js';
import { ResourceStore, rowsSeqOf } from '../core/store/resources.js';
import { HealthStatusStore } from './ports/health-status.js';
import { emptySnapshot, nextSnapshot } from '../core/snapshot/snapshot.js';
import { EventBus } from '../core/events/bus.js';
import { HealthView } from './ports/health-view.js';
import { SnapshotHolder, applyPlan, type ApplyOptions } from '../core/apply/apply.js';
import { ApplyHooks } from '../core/apply/hooks.js';
import { WriteGate } from '../core/apply/gate.js';
import { applyPlanSliced } from '../core/apply/apply-sliced.js';
import { loadProvenance } from '../core/apply/provenance.js';
import type { Plan } from '../core/plan/types.js';
import type { Snapshot } from '../core/snapshot/snapshot.js';
import type { Registry } from 'prom-client';
import { createMetricsRegistry } from './ports/metrics.js';
import { MemoryNonceStore, MemorySessionStore, type NonceStore, type SessionStore } from './ports/sessions.js';
import { NO_MAIL, type MailPort } from './ports/mail.js';
import type { Ports } from './ports/parts.js';

/**
 * The runtime core shared by every listener: config, storage, the current Snapshot, the health
 * view and the event bus. Built once at start; listeners receive it.
 */
export interface Core {
  config: Config;
  log: Logger;
  db: Db;
  store: ResourceStore;
  healthStore: HealthStatusStore;
  holder: SnapshotHolder;
  bus: EventBus;
  health: HealthView;
  /** Prometheus registry; parts add their metrics here */
  metrics: Registry;
  startedAt: number;
  /** system key from GSLB_API_KEY; undefined means dev mode */
  systemKey: string | undefined;
  /** the environment the daemon started with (tests pass their own; read GSLB_SECRET_KEY here) */
  env: NodeJS.ProcessEnv;
  /** chooses ids for new rows */
  newId: () => string;
  /** applies a plan through the one write path, in one turn (409 while a large apply holds `applyGate`) */
  apply: (plan: Plan, opts?: ApplyOptions) => Snapshot;
  /**
   * applies a plan through the same write path, a large one in slices between turns of the event
   * loop (core/apply/apply-sliced.ts); waits for the gate first
   */
  applySliced: (plan: Plan, opts?: ApplyOptions) => Promise<Snapshot>;
  /** held while a large plan is applied in slices; REST writes wait for it */
  applyGate: WriteGate;
  /** work every apply runs in its transaction or after its swap (`applyHooks.add(hook)` → remove) */
  applyHooks: ApplyHooks;
  /** a fresh revision id for a REST write */
  apiRevision: () => string;
  /** session storage (memory per node; the cluster part swaps in NATS KV) */
  sessions: SessionStore;
  /** single-use values: OIDC state, password-reset tokens (memory per node; NATS KV in a cluster) */
  nonces: NonceStore;
  /** outbound mail; the mail part replaces the default */
  mail: MailPort;
  /** counters that listeners fill in (e.g. open WebSocket clients: of one tenant, or all without one) */
  gauges: { webSocketClients: (tenantId?: string | null) => number };
  /** what parts publish about themselves (e.g. `dnsPort` actually bound), typed per part (runtime/ports.ts) */
  ports: Ports;
  /** cleanup callbacks run at shutdown, last registered first */
  closers: (() => Promise<void> | void)[];
}

/** The view of the core a store of plan rows needs: read the snapshot, write one-row plans. */
export type RowWriter = Pick<Core, 'holder' | 'apply' | 'apiRevision'>;

/** Opens storage, loads rows and health into memory, and wires the applier. */
export function createCore(config: Config, log: Logger, env: NodeJS.ProcessEnv = process.env): Core {
  const db = openDatabase(config.database.path);
  const store = new ResourceStore(db);
  const healthStore = new HealthStatusStore(db, (err) => log.error({ err }, 'writing health status failed'));
  const rows = store.loadAll();
  const last = db.prepare('SELECT revision FROM revisions ORDER BY seq DESC LIMIT 1').get() as { revision: string } | undefined;
  const initial = nextSnapshot(emptySnapshot(), rows.map((row) => ({ op: 'put', row })), last?.revision ?? '', Date.now());
  const holder = new SnapshotHolder(initial, loadProvenance(db));
  holder.rowsSeq = rowsSeqOf(db);
  const bus = new EventBus((err, event) => log.error({ err, event }, 'event listener failed'));
  const health = new HealthView();
  const applyHooks = new ApplyHooks((err) => log.error({ err }, 'apply hook failed'));
  for (const h of healthStore.loadAll()) health.set(h.poolId, h.ipAddress, h.entry);
  const applyGate = new WriteGate();
  const ctx = { store, holder, bus, hooks: applyHooks, gate: applyGate };
  const core: Core = {
    config, log, db, store, healthStore, holder, bus, health,
    metrics: createMetricsRegistry(config.cluster.id, config.node.id),
    startedAt: Date.now(),
    systemKey: env.GSLB_API_KEY || undefined,
    env,
    newId: () => randomUUID(),
    apply: (plan, opts) => applyPlan(ctx, plan, opts),
    applySliced: (plan, opts) => applyPlanSliced({ ...ctx, checkpoint: core.ports.walCheckpoint }, plan, opts),
    applyGate,
    applyHooks,
    apiRevision: () => `api:${randomUUID()}`,
    sessions: new MemorySessionStore(),
    nonces: new MemoryNonceStore(),
    mail: NO_MAIL,
    gauges: { webSocketClients: () => 0 },
    ports: { started: false },
    closers: [() => { healthStore.flush(); db.close(); }],
  };
  log.info({ rows: rows.length, revision: initial.revision || null }, 'state loaded');
  return core;
}
