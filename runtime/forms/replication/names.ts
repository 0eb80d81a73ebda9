import type { Config } from '../../config/types.js';
import { streamName } from '../../cluster/port.js';

/** The JetStream names of the form service in a cluster (docs/forms.md "In a cluster"), from `forms.cluster`. */
export interface FormClusterNames {
  /** the stream of submissions, claims, replays, reminders and delivery outcomes */
  stream: string;
  /** its one subject: `<subjectPrefix>.<cluster token>` */
  subject: string;
  /** KV: who claimed a submission (`<cluster>.<form>.<id>`, created once) */
  claims: string;
  /** KV: who sends a delivery now and whether it is settled (`<cluster>.<delivery key>`) */
  deliveries: string;
  /** KV with the lease of the scheduled runs (reminders, digests) */
  lease: string;
  /** object store of uploaded files */
  files: string;
}

/** Derives the names; `clusterToken` is the encoded cluster id. */
export function formClusterNames(cfg: Config['forms']['cluster'], clusterToken: string): FormClusterNames {
  return {
    stream: streamName(cfg.stream),
    subject: `${cfg.subjectPrefix}.${clusterToken}`,
    claims: `${cfg.kvBucket}_CLAIMS`,
    deliveries: `${cfg.kvBucket}_DELIVERIES`,
    lease: `${cfg.kvBucket}_LEASE`,
    files: `${cfg.kvBucket}_FILES`,
  };
}

/** Replicas of the stream, buckets and store: `forms.cluster.replicas`, else the NATS servers known, at most 3. */
export function formReplicas(cfg: Config['forms']['cluster'], servers: number): number {
  return cfg.replicas ?? Math.max(1, Math.min(3, servers));
}
