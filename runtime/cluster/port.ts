import type { Core } from '../app.js';
import type { Logger } from '../log/logger.js';
import type { ConfigGate } from './config-gate.js';
import type { ConfigLedger } from './ledger.js';
import type { GitLeader } from './lease.js';
import type { Liveness } from './liveness.js';
import type { ClusterMetrics } from './metrics.js';
import type { ClusterNames } from './names.js';
import type { NatsLink } from './nats-link.js';

/*
 * What other features may use of the cluster (docs/architecture.md "Folders and import
 * directions"): the config stream's message, its apply and ledger, the git lease, liveness, and
 * the extension point of config sync (the canary of gitops plugs in there).
 */
export { applyConfigMessage, retrying, type ConfigApplyResult } from './config-apply.js';
export { isConfigMsg, parseConfigJson, type ConfigMsg } from './config-msg.js';
export type { ConfigAdmission, ConfigGate, ConfigStep } from './config-gate.js';
export { holdsNow, type GitLeader } from './lease.js';
export { ConfigLedger } from './ledger.js';
export { outboxHook } from './outbox.js';
export type { Liveness } from './liveness.js';
export type { ClusterMetrics } from './metrics.js';
export type { ClusterNames } from './names.js';
export type { NatsLink } from './nats-link.js';

/** What config sync offers its extension: this node's link, names, ledger, liveness, lease and metrics. */
export interface ConfigSyncContext {
  link: NatsLink;
  names: ClusterNames;
  ledger: ConfigLedger;
  live: Liveness;
  /** the git leader lease (held by the node that pulls from git) */
  lease: GitLeader;
  metrics: ClusterMetrics;
  log: Logger;
  /** how often heartbeats go out, in ms */
  heartbeatMs: number;
  applyTimeoutMs: number;
  /** publishes the outbox now */
  flush(): void;
}

/**
 * What an extension adds to config sync: the gate of the config consumer, a payload in this
 * node's heartbeats (field `canary`) and the reader of peers' payloads, the status GET /cluster
 * shows (field `canary`), and a stop run at shutdown.
 */
export interface ConfigSyncHooks {
  gate: ConfigGate;
  heartbeat(): unknown;
  heard(node: string, payload: unknown): void;
  status(): object | null;
  stop(): void;
}

/** Extends config sync; the cluster part calls it once, in its setup, when config sync runs. */
export type ConfigSyncExtension = (core: Core, ctx: ConfigSyncContext) => ConfigSyncHooks;

declare module '../ports/parts.js' {
  interface Ports {
    /**
     * the extension of config sync (gitops/canary/part.ts, set up before the cluster part);
     * without it the config consumer applies plain plans only (runtime/cluster/plain-gate.ts)
     */
    configSyncExtension?: ConfigSyncExtension;
  }
}
