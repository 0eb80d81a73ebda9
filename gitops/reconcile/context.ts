import type { Core } from '../../runtime/app.js';
import type { Logger } from '../../runtime/log/logger.js';
import type { DesiredRow, Plan } from '../../core/plan/types.js';
import type { ReconcileError } from '../errors.js';
import type { RoutingCase } from '../load/index.js';
import type { ParseCache } from '../load/manifest.js';
import type { GitOpsMetrics } from '../metrics.js';
import type { OffloadWorker } from '../offload/offload.js';
import type { RollbackGuard } from '../rollback/guard.js';
import type { SourceOptions } from '../source/git-source.js';
import type { GitOpsStore } from '../status.js';
import type { CommitParts } from '../verify/commit-object.js';
import type { Keyring } from '../verify/keyring.js';
import type { Signer } from '../verify/signature.js';

/*
 * The vocabulary of the reconcile (DESIGN data flow): what the steps of gitops/reconcile/ take and
 * return. The steps import this file and each other's result types, never the Reconciler that
 * wires them (gitops/reconcile.ts).
 */

/** What started a reconcile. A webhook carries its receipt time and the pushed SHA. */
export interface Trigger { kind: 'poll' | 'webhook' | 'manual' | 'start' | 'rollback'; receivedAt: number; after?: string | undefined }

export interface ReconcileRequest { trigger: Trigger; force?: boolean }

/** What the reconcile steps use, fixed for the controller's life; each step names the part it needs. */
export interface ReconcileDeps {
  core: Core;
  store: GitOpsStore;
  metrics: GitOpsMetrics;
  source: SourceOptions;
  /** loads, validates and plans commits off the DNS thread; without it they run here (docs/gitops.md "Off the DNS thread") */
  offload: OffloadWorker | undefined;
  now: () => number;
  /** the keyring commits are verified with, and the verdicts cached under it */
  keyring: Keyring;
  /** parsed YAML of the last loaded commit's files, by path and blob id */
  parseCache: ParseCache;
  /** health-gated rollback: watches applied revisions, pins out rolled-back ones (docs/gitops.md "Automatic rollback") */
  rollback: RollbackGuard;
}

/** A verified commit: its parts, and the signer when signatures are required. */
export interface Verified { commit: CommitParts; signer: Signer | undefined }

/**
 * The last verified, loaded and validated commit (verification is not repeated per poll); its
 * desired rows only when planned here (the offload worker keeps its own).
 */
export interface LoadedCommit extends Verified { sha: string; stamp: string; desired: DesiredRow[] | undefined; cases: RoutingCase[] }

/** The last refused commit, so a stalled head is not re-checked and re-announced every poll. */
export interface Refusal { sha: string; stamp: string; error: ReconcileError }

/**
 * What a reconcile reached so far, for the outcome recorder also when a step fails: the head, the
 * plan (its counts are logged, a held-back plan's too), per-step timings, and the logger (with the
 * revision once the head is known). Written by the Reconciler only.
 */
export interface Trace {
  log: Logger;
  timings: Record<string, number>;
  sha?: string;
  plan?: Plan;
}

/** A reconcile that ran to its end: applied, recorded an empty commit, or found nothing to do. */
export interface Finished {
  result: 'applied' | 'noop' | 'unchanged';
  sha: string;
  signer: Signer | undefined;
  plan: Plan;
  drift: boolean;
}

/** A reconcile that stopped after the source step: the head is a revision already refused. */
export interface Skipped { result: 'skipped'; sha: string; refused: ReconcileError }

/** A reconcile that failed at some step. */
export interface Failed { result: 'failed'; error: ReconcileError }

/** A rollback that was applied: the good revision `sha` re-applied in place of `from`. */
export interface RolledBack {
  result: 'rolledback';
  /** the revision re-applied */
  sha: string;
  /** the revision that breached, now pinned out */
  from: string;
  reason: string;
  signer: string | null;
  plan: Plan;
}

/** How one reconcile ended, for the outcome recorder. */
export type Outcome = Finished | Skipped | Failed | RolledBack;
