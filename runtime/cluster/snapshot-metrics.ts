import { Counter, Gauge, type Registry } from 'prom-client';

/** Metrics of config stream compaction (docs/cluster.md "Compaction"). */
export interface SnapshotMetrics {
  snapshots: Counter<'direction'>;
  snapshotSeq: Gauge;
}

/** Registers them on the core registry. */
export function createSnapshotMetrics(registry: Registry): SnapshotMetrics {
  const registers = [registry];
  return {
    snapshots: new Counter({
      name: 'gslbd_state_config_snapshots_total', labelNames: ['direction'], registers,
      help: 'config snapshots: written (object put and record moved by this node), loaded (applied here instead of the plans before it)',
    }),
    snapshotSeq: new Gauge({ name: 'gslbd_state_config_snapshot_seq', help: 'stream sequence of the newest config snapshot this node wrote or loaded', registers }),
  };
}
