import { Counter, Gauge, type Registry } from 'prom-client';
import type { TargetType } from './target.js';

/** The alert counters, labelled by target type (`webhook`, `oncall_a`, `oncall_b`, `mail`). */
export interface AlertMetrics {
  /** events the receiver accepted */
  sent: Counter<'target'>;
  /** events given up after the last retry */
  failed: Counter<'target'>;
  /** events refused because the target's queue was full */
  dropped: Counter<'target'>;
  /** events waiting or in flight */
  queued: Gauge<'target'>;
}

/** Registers `gslbd_alerts_{sent,failed,dropped}_total{target}` and `gslbd_alerts_queued{target}`. */
export function createAlertMetrics(registry: Registry, pending: () => Map<TargetType, number>): AlertMetrics {
  const sent = new Counter({ name: 'gslbd_alerts_sent_total', help: 'Alert events delivered, by target type', labelNames: ['target'], registers: [registry] });
  const failed = new Counter({ name: 'gslbd_alerts_failed_total', help: 'Alert events given up after retries, by target type', labelNames: ['target'], registers: [registry] });
  const dropped = new Counter({ name: 'gslbd_alerts_dropped_total', help: 'Alert events dropped because the queue was full, by target type', labelNames: ['target'], registers: [registry] });
  const queued = new Gauge({
    name: 'gslbd_alerts_queued', help: 'Alert events waiting or in flight, by target type', labelNames: ['target'], registers: [registry],
    collect() { for (const [t, n] of pending()) this.set({ target: t }, n); },
  });
  return { sent, failed, dropped, queued };
}
