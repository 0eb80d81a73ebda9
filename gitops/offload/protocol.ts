import type { Config } from '../../runtime/config/types.js';
import type { Origin } from '../../core/model/types.js';
import type { RoutingCase } from '../routing/kind.js';
import type { SafetyOptions } from '../../core/plan/safety.js';
import type { Plan } from '../../core/plan/types.js';
import type { WireChunk } from './plan-wire.js';
import type { SourceFile } from '../source/git-source.js';

/** What the offload worker starts with (workerData). */
export interface OffloadInit {
  /** the daemon's database file (absolute); the worker opens its own connection */
  dbPath: string;
  /** the daemon config (validation rules depend on it) */
  config: Config;
  /** the daemon's environment (AlertTarget secret references must be readable on this node) */
  env: Record<string, string | undefined>;
}

/** One commit to load, validate and plan (the reconciler's load, validate and plan steps). */
export interface PlanRequest {
  sha: string;
  /** the local bare repository the source step fetched into */
  gitdir: string;
  pathPrefix: string;
  safety: SafetyOptions;
  tenantId: string;
}

/** Files to plan against the running state without applying anything (POST /gitops/plan). */
export interface DryRunRequest {
  files: SourceFile[];
  revision?: string;
  safety: SafetyOptions;
  /** the main thread's snapshot version, shown as the plan's `baseVersion` */
  baseVersion: number;
  /** keep the plan for the main thread to pull even without routing test cases */
  keepPlan: boolean;
}

/** A plan made by the worker, without its changes (those are pulled in chunks). */
export interface PlanSummary {
  revision: string;
  origin: Origin;
  /** `rowsSeqOf` of the database state the plan was computed against */
  baseSeq: number;
  counts: Plan['counts'];
  safety: Plan['safety'];
  /** number of changes */
  total: number;
  /** where the worker's time went, ms: reading the database state, checking against it, planning */
  timings: { read: number; check: number; plan: number };
}

/** Main thread → worker. */
export type ToOffload =
  | ({ t: 'plan'; id: number } & PlanRequest)
  | ({ t: 'dry-run'; id: number } & DryRunRequest)
  /** changes [from, from + count) of plan `id`, as a chunk (plan-wire.ts) */
  | { t: 'chunk'; id: number; from: number; count: number }
  /** the main thread has what it needs of plan `id` (or gave up on it) */
  | { t: 'release'; id: number }
  /** a passive WAL checkpoint on the worker's connection */
  | { t: 'checkpoint'; id: number };

/** Why a request failed, as the reconciler classifies it. */
export type OffloadFailure = 'FetchFailed' | 'ManifestsInvalid' | 'Internal';

/** Worker → main thread. Each plan request gets `loaded`, then `validated`, then `planned`, then `planId` (plan-id.ts, computed once the changes were pulled or the plan released), or a `failed` at any point. */
export type FromOffload =
  /** load done; `problems`: YAML syntax errors (with the validation problems of what did parse) */
  | { t: 'loaded'; id: number; problems?: string[] }
  /** validation done; `problems`: schema, semantic and running-state problems; else the routing test cases */
  | { t: 'validated'; id: number; problems?: string[]; cases?: RoutingCase[] }
  | { t: 'planned'; id: number; summary: PlanSummary }
  /**
   * A dry run's outcome: `body`, the JSON text of `{valid, problems, plan, text}`; with a plan kept
   * (`keepPlan`, or routing test cases), `summary` (its changes are then pulled in chunks, then released)
   */
  | { t: 'dry-run'; id: number; body: string; planned: boolean; cases: RoutingCase[]; summary?: PlanSummary }
  /** the plan's id, computed once the main thread has pulled its changes (while it applies them) */
  | { t: 'planId'; id: number; planId: string }
  | { t: 'failed'; id: number; reason: OffloadFailure; message: string }
  | { t: 'chunk'; id: number; from: number; chunk: WireChunk }
  | { t: 'checkpointed'; id: number; error?: string };
