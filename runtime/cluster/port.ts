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
export type { ClusterLease, ClusterStreams } from './streams.js';
export { encodeToken, streamName } from './names.js';
export { alreadyExists } from './kv-claim.js';

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

/**
 * What other features may use of the cluster transport (docs/architecture.md "Ports"): the types of
 * the cluster-wide limiters on `core.ports.sharedLimits` (shared-limits.ts, docs/cluster.md
 * "Shared limits"). A feature describes its limit as a pure policy; the cluster keeps the policy's
 * state per key in KV and decides admissions against it.
 */

/**
 * The semantics of one limit over a state `S` (JSON), kept per key. `undefined` is the state of a
 * key with nothing recorded (or expired). Pure: the clock is passed in.
 */
export interface LimitPolicy<S> {
  /** the state after `n` more admissions (or failures) at `now` */
  add(s: S | undefined, n: number, now: number): S;
  /** how many more admissions the state allows at `now` (0 or less: none) */
  room(s: S | undefined, now: number): number;
  /** milliseconds until one more is allowed at `now` */
  waitMs(s: S | undefined, now: number): number;
  /** the limit's size (requests per window, or the bucket's burst): the allowed overshoot is 20 % of it */
  size: number;
  /** how long an untouched state still matters (the KV bucket's TTL) */
  ttlMs: number;
}

/** An admission decision: allowed, or refused with the milliseconds until one more is allowed. */
export type Admission = { ok: true } | { ok: false; waitMs: number };

/**
 * One limit shared by the nodes of a cluster. Every method resolves `undefined` when the cluster
 * cannot tell now (the bus is away, KV fails): the caller then applies its own per-node limit.
 */
export interface SharedLimiter<S> {
  /** Counts one request of `key` if the limit allows it (docs/cluster.md "Shared limits": at most 20 % above the limit). */
  take(key: string): Promise<Admission | undefined>;
  /** The key's state as KV has it now (`{state: undefined}`: nothing recorded). */
  read(key: string): Promise<{ state: S | undefined } | undefined>;
  /** Adds `n` to the key's state in KV at once (no local batching); true when written. */
  add(key: string, n: number): Promise<true | undefined>;
  /** Forgets the key's state; true when done. */
  reset(key: string): Promise<true | undefined>;
}

/** The factory the cluster part installs: one limiter per name (its own KV bucket `SVC_LIMIT_<name>`). */
export interface SharedLimits {
  limiter<S>(name: string, policy: LimitPolicy<S>): SharedLimiter<S>;
}

declare module '../ports/parts.js' {
  interface Ports {
    /**
     * the extension of config sync (gitops/canary/part.ts, set up before the cluster part);
     * without it the config consumer applies plain plans only (runtime/cluster/plain-gate.ts)
     */
    configSyncExtension?: ConfigSyncExtension;
    /** cluster-wide limiters over KV (forms, RUM and login limits); unset without `state.nats.servers` */
    sharedLimits?: SharedLimits;
  }
}
