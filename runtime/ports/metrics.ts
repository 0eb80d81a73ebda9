import { Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The daemon's one Prometheus registry, with constant labels `cluster` and `node`. Each part
 * defines its own metrics on it (prefix `gslbd_`); the metrics part serves it.
 */
export function createMetricsRegistry(cluster: string, node: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ cluster, node });
  collectDefaultMetrics({ register: registry, prefix: 'gslbd_' });
  return registry;
}
