import { performance } from 'node:perf_hooks';
import type { Core } from '../runtime/app.js';
import { ReconcileError, transient } from './errors.js';
import type { SourceOptions } from './source/git-source.js';
import type { GitOpsMetrics } from './metrics.js';
import type { GitOpsStatus, GitOpsStore } from './status.js';
import type { OffloadWorker } from './offload/offload.js';
import { Keyring } from './verify/keyring.js';
import { RollbackGuard } from './rollback/guard.js';
import { initialRollbackStatus, rollbackOptions } from './rollback/state.js';
import { reportRollback } from './rollback/report.js';
import { rollbackStep } from './rollback/apply.js';
import { readSignals } from './watch/signals.js';
import { holdTrafficChange } from './replay/hold.js';
import type { Finished, LoadedCommit, Outcome, ReconcileDeps, ReconcileRequest, Refusal, RolledBack, Skipped, Trace, Verified } from './reconcile/context.js';
import { RunHold } from './reconcile/hold.js';
import { refusalStamp, sourceStep, standingStep } from './reconcile/source.js';
import { verifyStep } from './reconcile/verify.js';
import { loadStep, rememberedRows } from './reconcile/load.js';
import { checkActualStep, validateStep, type Validated } from './reconcile/validate.js';
import { holdUnsafe, planStep } from './reconcile/plan.js';
import { canaryGate, publishCanary } from './reconcile/canary.js';
import { testStep } from './reconcile/test.js';
import { applyStep } from './reconcile/apply.js';
import { nextRefusal, recordOutcome } from './reconcile/outcome.js';

export type { ReconcileRequest, Trigger } from './reconcile/context.js';

export interface ReconcilerDeps {
  core: Core;
  store: GitOpsStore;
  metrics: GitOpsMetrics;
  source: SourceOptions;
  /** loads, validates and plans commits off the DNS thread; without it they run here (docs/gitops.md "Off the DNS thread") */
  offload?: OffloadWorker | undefined;
  now?: () => number;
  /** asks the loop for a run that applies the pending rollback (gitops/rollback/guard.ts) */
  requestRollback?: () => void;
}

/** Runs `fn` as the step `name`, recording its duration in `trace.timings` even when it throws. */
async function timed<T>(trace: Trace, name: string, fn: () => T | Promise<T>): Promise<T> {
  const t0 = performance.now();
  try {
    return await fn();
  } finally {
    trace.timings[name] = Math.round((performance.now() - t0) * 10) / 10;
  }
}

/**
 * The GitOps reconciler (DESIGN data flow): `source → verify → load → validate → plan → apply`, each
 * a function of gitops/reconcile/ that takes what earlier steps returned, stopping at the first
 * failure; a final step always records status, events, logs and metrics. The Reconciler wires the
 * steps and keeps what outlives one reconcile: the status, the last verified commit and the last
 * refusal. Idempotent: running it twice on the same commit changes nothing the second time (apart
 * from correcting drift).
 */
export class Reconciler {
  readonly core: Core;
  readonly store: GitOpsStore;
  readonly metrics: GitOpsMetrics;
  readonly source: SourceOptions;
  /** health-gated rollback: watches applied revisions, pins out rolled-back ones (docs/gitops.md "Automatic rollback") */
  readonly rollback: RollbackGuard;
  status: GitOpsStatus;
  private readonly deps: ReconcileDeps;
  /** the last verified, loaded and validated commit (verification is not repeated per poll) */
  private loaded: LoadedCommit | undefined;
  /** the last refused commit, so a stalled head is not re-checked and re-announced every poll */
  private refused: Refusal | undefined;
  /** stamp of the fetched tags (gitops.quorum only): a new co-signing tag lifts a refusal */
  private tagStamp = '';
  private seq = 0;

  constructor(deps: ReconcilerDeps) {
    this.core = deps.core;
    this.store = deps.store;
    this.metrics = deps.metrics;
    this.source = deps.source;
    const now = deps.now ?? Date.now;
    const g = deps.core.config.gitops;
    const prev = deps.store.loadStatus();
    this.status = {
      enabled: true, repoURL: g.repoURL ?? null, branch: g.branch, ready: false, reason: 'Progressing', message: 'waiting for the first reconcile',
      errorClass: null, problems: [], observedRevision: prev?.observedRevision ?? null, lastAppliedRevision: deps.store.lastApplied() ?? null,
      lastAppliedAt: prev?.lastAppliedAt ?? null, lastSigner: prev?.lastSigner ?? null, lastAttemptAt: prev?.lastAttemptAt ?? null,
      lastPlan: prev?.lastPlan ?? null, drift: [], failures: 0, nextAttemptAt: null,
      // a stall outlives a restart: "stalled since" keeps its start until a reconcile succeeds
      failingSince: prev && !prev.ready ? prev.failingSince ?? null : null, lastError: prev?.lastError ?? null,
    };
    const options = rollbackOptions(deps.core.config);
    const rollback = initialRollbackStatus(options.enabled, prev?.rollback, deps.store.lastApplied());
    this.status.rollback = rollback;
    this.rollback = new RollbackGuard({
      options, read: () => readSignals(deps.core, now()), log: deps.core.log.child({ component: 'gitops' }),
      lastApplied: () => deps.store.lastApplied(),
      save: () => {
        try { deps.store.saveStatus(this.status); } catch (err) { deps.core.log.error({ err }, 'saving gitops status failed'); }
      },
      requestRollback: () => deps.requestRollback?.(),
      report: (rec) => reportRollback(deps.core, deps.metrics, rec),
    }, rollback);
    this.deps = {
      core: deps.core, store: deps.store, metrics: deps.metrics, source: deps.source, offload: deps.offload, now,
      keyring: new Keyring(() => deps.core.config.gitops.keyringFile), parseCache: new Map(), rollback: this.rollback,
    };
  }

  /**
   * Runs one reconcile: the steps, then the outcome recorder (gitops/reconcile/outcome.ts). Never
   * throws: the outcome is in the returned status (also kept in `this.status` and persisted).
   * Callers serialise calls (the loop does).
   */
  async reconcile(req: ReconcileRequest): Promise<{ status: GitOpsStatus; error?: ReconcileError }> {
    const started = this.deps.now();
    const reconcileId = `${started.toString(36)}-${++this.seq}`;
    const trace: Trace = { log: this.core.log.child({ component: 'gitops', reconcileId }), timings: {} };
    const hold = new RunHold(this.core.applyGate);
    let outcome: Outcome;
    try {
      outcome = await this.runSteps(req, trace, hold);
    } catch (err) {
      outcome = { result: 'failed', error: err instanceof ReconcileError ? err : transient('ApplyFailed', (err as Error).message, { cause: err }) };
    } finally {
      hold.release();
    }
    try {
      this.refused = nextRefusal(this.refused, outcome, trace.sha, refusalStamp(this.deps.keyring.stamp(), this.tagStamp));
      recordOutcome(this.deps, this.status, req, trace, outcome, started);
    } catch (err) {
      // recording must not stop the loop (e.g. a full disk while writing the attempt)
      trace.log.error({ err }, 'recording the reconcile outcome failed');
    }
    return outcome.result === 'failed' ? { status: this.status, error: outcome.error } : { status: this.status };
  }

  /**
   * The steps in order (DESIGN data flow): `source → verify → load → validate → plan → test → apply`
   * (with `gitops.canary`, the canary gate after `plan`, and `publishCanary` in place of `apply`), each
   * taking what earlier steps returned; the first failure throws (a ReconcileError, or anything else
   * the caller classifies). Stops early for a head refused before (`skipped`) and for an applied
   * head without drift (`unchanged`). A pending rollback runs first, and when it is applied it ends
   * the run (`rolledback`); the rollback guard learns of every apply.
   */
  private async runSteps(req: ReconcileRequest, trace: Trace, hold: RunHold): Promise<Finished | Skipped | RolledBack> {
    const d = this.deps;
    if (this.rollback.state.pending) {
      const tried = await timed(trace, 'rollback', () => rollbackStep(d, hold, this.loaded, trace.log));
      if (tried) {
        trace.sha = tried.sha; trace.log = tried.log;
        if (tried.plan) trace.plan = tried.plan;
        if (tried.rolledBack) return tried.rolledBack;
      }
    }
    const { sha, refused } = await timed(trace, 'source', async () => {
      const head = await sourceStep(d);
      this.status.observedRevision = head;
      const standing = await standingStep(d, req, head, { refused: this.refused, tagStamp: this.tagStamp });
      this.tagStamp = standing.tagStamp;
      return { sha: head, refused: standing.refused };
    });
    trace.sha = sha;
    if (refused) return { result: 'skipped', sha, refused };
    trace.log = trace.log.child({ revision: sha });
    const verified = await timed(trace, 'verify', () => verifyStep(d, sha, this.verdictOf(sha)));
    const loaded = await timed(trace, 'load', () => loadStep(d, sha, rememberedRows(this.loaded, sha, d.keyring.stamp())));
    const { desired, cases } = await timed(trace, 'validate', async () => {
      const v = await validateStep(d, loaded);
      this.remember(sha, verified, v);
      checkActualStep(d, v);
      return v;
    });
    const planned = await timed(trace, 'plan', async () => {
      const p = await planStep(d, hold, sha, desired);
      trace.plan = p.plan;
      holdUnsafe(p.plan, req.force);
      await holdTrafficChange(this.core, p.plan, req.force, trace.log);
      return p;
    });
    const route = this.core.config.gitops.canary ? await timed(trace, 'canary', () => canaryGate({ ...d, status: this.status }, sha, planned)) : 'direct';
    const done = { sha, signer: verified.signer, plan: planned.plan, drift: planned.drift };
    if (planned.unchanged) return { result: 'unchanged', ...done };
    await timed(trace, 'test', () => testStep(d, planned.plan, cases));
    // ends the reconcile as waiting (CanaryBaking): the stream carries the plan from here
    if (route === 'canary') {
      await planned.idReady;
      publishCanary(d, req, sha, verified, planned);
    }
    // the reading the rollback watch compares with: right before the apply
    const baseline = planned.drift ? undefined : this.rollback.baseline();
    const result = await timed(trace, 'apply', () => applyStep(d, hold, req, sha, verified, planned));
    this.rollback.afterApply({ sha, result, drift: planned.drift, forced: Boolean(req.force), baseline });
    return { result, ...done };
  }

  /** The cached signature verdict of `sha` under the keyring as it is now, if any. */
  private verdictOf(sha: string): Verified | undefined {
    const l = this.loaded;
    return l && l.sha === sha && l.stamp === this.deps.keyring.stamp() ? { commit: l.commit, signer: l.signer } : undefined;
  }

  /** Remembers a commit validated now with its verdict, so later polls of the same head skip verify, load and validate. */
  private remember(sha: string, verified: Verified, v: Validated): void {
    if (v.fresh) this.loaded = { sha, stamp: this.deps.keyring.stamp(), commit: verified.commit, signer: verified.signer, ...v.fresh };
  }
}
