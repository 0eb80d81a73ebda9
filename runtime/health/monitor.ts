import type { EventBus, HealthTransition } from '../../core/events/bus.js';
import type { Logger } from '../log/logger.js';
import { hostPort } from '../log/listening.js';
import type { HealthEntry, HealthView } from '../ports/health-view.js';
import type { ProbeRecord } from './scheduler.js';
import type { CheckTarget } from './types.js';
import { applyProbe, initialState, NO_FLIP, type EndpointState } from './state.js';

/** Where flips are persisted (runtime/health/status-store.ts). */
export interface HealthSink {
  /** `e` is the live entry of the HealthView: write it out now, do not keep it */
  write(poolId: string, ipAddress: string, e: HealthEntry): void;
  remove(poolId: string, ipAddress?: string): void;
}

/** Observes the failover-detection histogram (`direction` down or up, seconds). */
export type DetectionObserver = (direction: 'down' | 'up', seconds: number) => void;

export interface MonitorDeps {
  view: HealthView;
  sink: HealthSink;
  bus: EventBus;
  node: string;
  observe: DetectionObserver;
  now?: () => number;
  /** where flips are logged at info (docs/logging.md); none: not logged */
  log?: Logger;
  /** the pool's name for the flip line (the pool id when unknown) */
  poolName?: (poolId: string) => string | undefined;
}

interface Tracked {
  state: EndpointState;
  /** false until the first probe after a (re)start wrote storage (§3 "first probe syncs storage") */
  synced: boolean;
  /** the target's HealthView entry, valid while the view's entryObjects equals `objects` */
  entry: HealthEntry | undefined;
  objects: number;
  /** set when the target ends or begins again: a probe loop's tag pointing here is stale */
  ended: boolean;
}

/**
 * Turns probe results into endpoint state and its effects (gslb-api.md §3). Every probe updates the
 * HealthView (score, rttMs, lastChecked). Storage is written only on a flip, plus once on the first
 * probe after a checker (re)start. A flip, in order: storage write, WebSocket `health_update`
 * (bus `ws_message`), bus `health_transition` (cluster, alerts, BGP listen there), histogram, and
 * one info line `health flip` (pool id and name, member, from, to, the probe's detail).
 */
export class HealthMonitor {
  private readonly tracked = new Map<string, Tracked>();
  private readonly now: () => number;

  constructor(private readonly deps: MonitorDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Starts tracking a target optimistically: healthy, score 1, until its first probe. */
  begin(t: CheckTarget): void {
    const now = this.now();
    const old = this.tracked.get(t.key);
    if (old) old.ended = true;
    this.tracked.set(t.key, { state: initialState(now), synced: false, entry: undefined, objects: -1, ended: false });
    const prev = this.deps.view.get(t.poolId, t.ip);
    this.deps.view.set(t.poolId, t.ip, { healthy: true, score: 1, lastChecked: prev?.lastChecked ?? 0, rttMs: prev?.rttMs ?? 0, node: this.deps.node });
  }

  /** Stops tracking a target and drops its live and stored entries at once. */
  end(t: CheckTarget): void {
    const tr = this.tracked.get(t.key);
    if (tr) tr.ended = true;
    this.tracked.delete(t.key);
    this.deps.view.delete(t.poolId, t.ip);
    this.deps.sink.remove(t.poolId, t.ip);
  }

  /** The state of a tracked target, or undefined. */
  stateOf(key: string): EndpointState | undefined {
    return this.tracked.get(key)?.state;
  }

  /** Records one finished probe (allocation-free unless it flips). Results for targets no longer tracked are ignored. */
  record(rec: ProbeRecord): void {
    const t = rec.target;
    // the scheduler hands back what was tagged on the loop's previous record: no lookup per probe
    let tr = rec.tag as Tracked | undefined;
    if (tr === undefined || tr.ended) {
      tr = this.tracked.get(t.key);
      if (!tr) return;
      rec.tag = tr;
    }
    const at = rec.finishedAt;
    const ok = rec.result.ok;
    const st = tr.state;
    const detectionMs = applyProbe(st, ok, at, t.check);
    // rttMs is an integer (§2); a failed probe keeps the last measured value for the latency step (-1)
    const rttMs = ok ? Math.round(rec.result.rttMs) : -1;
    const view = this.deps.view;
    let entry = tr.entry;
    if (entry && tr.objects === view.entryObjects) {
      view.update(entry, st.healthy, st.score, at, rttMs, this.deps.node);
    } else {
      entry = view.record(t.poolId, t.ip, st.healthy, st.score, at, rttMs, this.deps.node);
      tr.entry = entry;
      tr.objects = view.entryObjects;
    }
    const flipped = detectionMs !== NO_FLIP;
    if (flipped || !tr.synced) {
      this.deps.sink.write(t.poolId, t.ip, entry);
      tr.synced = true;
    }
    if (!flipped) return;
    const transition: HealthTransition = {
      poolId: t.poolId, ipAddress: t.ip, healthy: entry.healthy, score: entry.score, timestamp: at,
      rttMs: entry.rttMs, node: entry.node, detectionMs,
    };
    const { detectionMs: _d, ...payload } = transition;
    this.deps.bus.emit('ws_message', { type: 'health_update', payload });
    this.deps.bus.emit('health_transition', transition);
    this.deps.observe(entry.healthy ? 'up' : 'down', detectionMs / 1000);
    this.deps.log?.info({
      poolId: t.poolId, pool: this.deps.poolName?.(t.poolId) ?? t.poolId,
      // the probed address: icmp has no port; the others probe the check's port (docs/health.md)
      member: t.check.type === 'icmp' ? t.ip : hostPort(t.ip, t.port),
      check: t.check.type, from: entry.healthy ? 'unhealthy' : 'healthy', to: entry.healthy ? 'healthy' : 'unhealthy',
      detail: rec.result.detail, score: entry.score, detectionMs,
    }, 'health flip');
  }
}
