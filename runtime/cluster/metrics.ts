import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** The cluster part's Prometheus metrics (prefix `gslbd_state_`, and the canary coordinator's `gslbd_gitops_canary_total`). */
export interface ClusterMetrics {
  connected: Gauge;
  published: Counter<'type'>;
  received: Counter<'type'>;
  kvOps: Counter<'bucket' | 'op' | 'result'>;
  mergeLag: Histogram<'type'>;
  liveNodes: Gauge;
  configSeq: Gauge<'peer'>;
  applyFailures: Counter;
  byReference: Counter<'direction'>;
  canary: Counter<'result'>;
}

/** Registers the metrics on the core registry. */
export function createClusterMetrics(registry: Registry): ClusterMetrics {
  const registers = [registry];
  return {
    connected: new Gauge({ name: 'gslbd_state_nats_connected', help: '1 while connected to NATS', registers }),
    published: new Counter({ name: 'gslbd_state_messages_published_total', help: 'messages published to NATS by type (health, heartbeat, config)', labelNames: ['type'], registers }),
    received: new Counter({ name: 'gslbd_state_messages_received_total', help: 'messages received from NATS by type (health, heartbeat, config)', labelNames: ['type'], registers }),
    kvOps: new Counter({ name: 'gslbd_state_kv_operations_total', help: 'KV operations by bucket, operation and result', labelNames: ['bucket', 'op', 'result'], registers }),
    mergeLag: new Histogram({
      name: 'gslbd_state_merge_lag_seconds', help: 'time from an event on its origin node to its merge here (health flip, config plan)',
      labelNames: ['type'], buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1, 5, 30], registers,
    }),
    liveNodes: new Gauge({ name: 'gslbd_state_live_nodes', help: 'live nodes of the cluster, this node included', registers }),
    configSeq: new Gauge({ name: 'gslbd_state_config_applied_seq', help: 'last config stream sequence applied, per node of the cluster (from heartbeats; this node as peer=self id)', labelNames: ['peer'], registers }),
    applyFailures: new Counter({ name: 'gslbd_state_config_apply_failures_total', help: 'config plans from the stream that failed to apply within applyTimeout', registers }),
    byReference: new Counter({
      name: 'gslbd_state_config_plans_by_reference_total', labelNames: ['direction'], registers,
      help: 'config plans too large for one stream message, carried through the object store: published (object put and reference acknowledged), received (object fetched and checked)',
    }),
    canary: new Counter({ name: 'gslbd_gitops_canary_total', help: 'canary revisions by result: started (queued by the git leader), promoted, aborted, superseded (published by the coordinator)', labelNames: ['result'], registers }),
  };
}
