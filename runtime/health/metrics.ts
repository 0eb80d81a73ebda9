import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { HealthView } from '../ports/health-view.js';
import type { HealthScheduler } from './scheduler.js';
import type { DetectionObserver } from './monitor.js';

/** Buckets (seconds) of the detection histogram: sub-second to a few default intervals. */
export const DETECTION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 15, 20, 30, 60, 120];

export interface HealthMetrics {
  observeDetection: DetectionObserver;
  countProbe: (type: string, ok: boolean) => void;
}

/**
 * Registers the health metrics on the daemon's registry (gslb-api.md §6):
 * `gslbd_health_failover_detection_seconds{direction}`, `gslbd_health_endpoints{pool}` and
 * `gslbd_health_endpoints_healthy{pool}` (computed from the probed targets at scrape time) and
 * `gslbd_health_probes_total{type,result}`.
 */
export function registerHealthMetrics(registry: Registry, view: HealthView, scheduler: HealthScheduler): HealthMetrics {
  const histogram = new Histogram({
    name: 'gslbd_health_failover_detection_seconds',
    help: 'Time from the last probe that saw the old state to the health flip, by direction (down, up)',
    labelNames: ['direction'] as const,
    buckets: DETECTION_BUCKETS,
    registers: [registry],
  });
  // Both series exist from the start, so dashboards see 0 rather than no data.
  histogram.zero({ direction: 'down' });
  histogram.zero({ direction: 'up' });
  // Probes are counted in plain numbers (type → [fail, ok]) and copied into the counter at scrape
  // time: counting costs no label hashing and no allocation per probe.
  const counts = new Map<string, number[]>();
  const tcpCounts = [0, 0]; // the type at scale, without a lookup
  counts.set('tcp', tcpCounts);
  new Counter({
    name: 'gslbd_health_probes_total',
    help: 'Health probes finished, by check type and result (ok, fail)',
    labelNames: ['type', 'result'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [type, c] of counts) {
        if (c[1]! > 0) this.inc({ type, result: 'ok' }, c[1]!);
        if (c[0]! > 0) this.inc({ type, result: 'fail' }, c[0]!);
      }
    },
  });
  const endpointCounts = () => {
    const total = new Map<string, number>();
    const healthy = new Map<string, number>();
    for (const t of scheduler.targets()) {
      total.set(t.poolId, (total.get(t.poolId) ?? 0) + 1);
      if (view.get(t.poolId, t.ip)?.healthy ?? true) healthy.set(t.poolId, (healthy.get(t.poolId) ?? 0) + 1);
    }
    return { total, healthy };
  };
  new Gauge({
    name: 'gslbd_health_endpoints',
    help: 'Health-checked endpoints, by pool',
    labelNames: ['pool'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [pool, n] of endpointCounts().total) this.set({ pool }, n);
    },
  });
  new Gauge({
    name: 'gslbd_health_endpoints_healthy',
    help: 'Health-checked endpoints currently healthy, by pool',
    labelNames: ['pool'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const { total, healthy } = endpointCounts();
      for (const pool of total.keys()) this.set({ pool }, healthy.get(pool) ?? 0);
    },
  });
  return {
    observeDetection: (direction, seconds) => histogram.observe({ direction }, seconds),
    countProbe: (type, ok) => {
      let c = type === 'tcp' ? tcpCounts : counts.get(type);
      if (!c) counts.set(type, (c = [0, 0]));
      c[ok ? 1 : 0]++;
    },
  };
}
