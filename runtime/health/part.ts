import { PARTS } from '../parts.js';
import type { Core } from '../app.js';
import { createCheckers, tcpProbePath, type TcpProbePath } from './checkers/index.js';
import { scriptPolicyOf } from '../config/script-policy.js';
import { HealthScheduler } from './scheduler.js';
import { HealthMonitor } from './monitor.js';
import { registerHealthMetrics } from './metrics.js';
import { desiredTargets, snapshotTargetSteps, staticTargets } from './targets.js';
import { STATIC_POOL_ID } from '../ports/health-view.js';
import { hostPort } from '../log/listening.js';
import { rowsOf, type Snapshot } from '../../core/snapshot/snapshot.js';
import type { PoolRow } from '../../core/model/types.js';
import type { CheckTarget } from './types.js';

declare module '../ports/parts.js' {
  interface Ports {
    /** the health checker's scheduler and monitor, when it runs */
    health?: HealthRuntime;
    /** which TCP probe implementation the checkers use */
    tcpProbePath?: TcpProbePath;
  }
}

/** The running health checker of a daemon, reachable for tests and the bench. */
export interface HealthRuntime {
  scheduler: HealthScheduler;
  monitor: HealthMonitor;
  /** re-reads the desired targets from the config and the current snapshot */
  reconcile: () => void;
}

/** Logs the startup warning for checks that skip certificate verification (once per check). */
function warnInsecure(core: Core, targets: Iterable<CheckTarget>, warned: Set<string>): void {
  for (const t of targets) {
    if (!t.check.tls || !t.check.insecureSkipVerify || t.check.type !== 'http') continue;
    const id = `${t.checkId}|${t.checkKey}`;
    if (warned.has(id)) continue;
    warned.add(id);
    core.log.warn({ pool: t.poolId, check: t.checkId }, 'health check skips TLS certificate verification (insecureSkipVerify)');
  }
}

/**
 * Starts the health checker: probes every desired target (file endpoints under the `static` pool
 * when health.enabled, and every pool with a health check), and follows each applied plan at once
 * by diffing desired targets against the running set (added, removed, check changed). Removed
 * targets stop probing and lose their live and stored entries in the same turn as the snapshot
 * swap that removed them from DNS. Publishes `core.ports.health` ({@link HealthRuntime}) and
 * `core.ports.tcpProbePath` (`syn`, `native` or `net`, see checkers/index.ts).
 */
export function startHealth(core: Core): HealthRuntime {
  const log = core.log.child({ component: 'health' });
  let metrics: ReturnType<typeof registerHealthMetrics> | undefined;
  const monitor = new HealthMonitor({
    view: core.health,
    sink: core.healthStore,
    bus: core.bus,
    node: core.config.node.id,
    observe: (d, s) => metrics?.observeDetection(d, s),
    log,
    poolName: (id) => (id === STATIC_POOL_ID ? 'static' : rowsOf<PoolRow>(core.holder.current, 'pool').get(id)?.name),
  });
  // health.tcpProbeMode: syn asks for half-open probes; without CAP_NET_RAW one warning, then connect()
  const checkers = createCheckers(log, { scripts: scriptPolicyOf(core.config.health), tcpProbe: core.config.health.tcpProbeMode === 'syn' ? 'syn' : 'native' });
  core.ports.tcpProbePath = tcpProbePath(checkers);
  const scheduler = new HealthScheduler({
    checkers,
    onResult: (rec) => {
      metrics?.countProbe(rec.target.check.type, rec.result.ok);
      // every probe at debug (docs/logging.md); checked first so info level builds no object per probe
      if (log.isLevelEnabled('debug')) {
        const t = rec.target;
        log.debug({ poolId: t.poolId, member: t.check.type === 'icmp' ? t.ip : hostPort(t.ip, t.port), check: t.check.type, ok: rec.result.ok, rttMs: rec.result.rttMs, detail: rec.result.detail }, 'probe');
      }
      monitor.record(rec);
    },
  });
  metrics = registerHealthMetrics(core.metrics, core.health, scheduler);
  const warned = new Set<string>();
  /** the targets of a snapshot a large apply is about to swap in, listed ahead (below) */
  let prepared: { snapshot: Snapshot; desired: Map<string, CheckTarget> } | undefined;
  const reconcile = () => {
    const s = core.holder.current;
    const desired = prepared?.snapshot === s ? prepared.desired : desiredTargets(core.config, s);
    prepared = undefined;
    const res = scheduler.sync(desired);
    for (const t of res.removed) monitor.end(t);
    for (const t of [...res.added, ...res.restarted]) monitor.begin(t);
    warnInsecure(core, [...res.added, ...res.restarted], warned);
    if (res.added.length + res.removed.length + res.restarted.length > 0) {
      log.info({ targets: scheduler.size, added: res.added.length, removed: res.removed.length, restarted: res.restarted.length }, 'health targets changed');
    }
  };
  // Stored entries of endpoints that are no longer checked (member or check deleted while the
  // daemon was down) would keep an endpoint unhealthy with nothing to correct them.
  const pruneStale = () => {
    const desired = desiredTargets(core.config, core.holder.current);
    const stale: [string, string][] = [];
    for (const [poolId, m] of core.health.pools()) for (const ip of m.keys()) if (!desired.has(`${poolId}|${ip}`)) stale.push([poolId, ip]);
    for (const [poolId, ip] of stale) {
      core.health.delete(poolId, ip);
      core.healthStore.remove(poolId, ip);
    }
  };
  pruneStale();
  reconcile();
  // the targets come from pools, members and health checks: a plan of services alone leaves them be
  const off = core.bus.on('plan_applied', ({ plan }) => { if (plan.changes.some((c) => TARGET_KINDS.has(c.kind))) reconcile(); });
  // A large apply (core/apply/apply-sliced.ts) lists the next snapshot's targets in slices
  // before its swap; the reconcile at the swap then only starts and stops checkers.
  const offPrepare = core.applyHooks.add({
    prepare: async (plan, next, _prev, slicer) => {
      if (!plan.changes.some((c) => TARGET_KINDS.has(c.kind))) return;
      const desired = staticTargets(core.config);
      const steps = snapshotTargetSteps(next, desired);
      while (!steps.next().done) await slicer.maybePause();
      return () => { prepared = { snapshot: next, desired }; };
    },
  });
  log.info({ targets: scheduler.size, staticEnabled: core.config.health.enabled, tcpProbePath: core.ports.tcpProbePath }, 'health checker started');
  const rt: HealthRuntime = { scheduler, monitor, reconcile };
  core.ports.health = rt;
  core.closers.push(() => {
    off();
    offPrepare();
    scheduler.stop();
  });
  return rt;
}

/** Kinds whose rows make up the probe targets (targets.ts). */
const TARGET_KINDS: ReadonlySet<string> = new Set(['pool', 'member', 'healthcheck']);

/** The health part: starts after the API so the first probes do not delay startup. */
PARTS.push({
  name: 'health',
  start: (core) => {
    startHealth(core);
  },
});
