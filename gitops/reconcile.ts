import { readFileSync, statSync } from 'node:fs';
import type { PublicKey } from 'openpgp';
import type { Core } from '../runtime/app.js';
import { ReconcileError, stalled, transient } from './errors.js';
import type { SourceOptions } from './source/git-source.js';
import type { CommitParts } from './verify/commit-object.js';
import { readKeyring, type Signer } from './verify/signature.js';
import type { ParseCache } from './load/manifest.js';
import type { DesiredRow } from '../core/plan/types.js';
import type { RoutingCase } from './load/index.js';
import type { GitOpsMetrics } from './metrics.js';
import type { GitOpsStatus, GitOpsStore } from './status.js';
import { runSteps, type Outcome, type Trace } from './reconcile/run.js';
import { recordOutcome } from './reconcile/outcome.js';
import { RollbackGuard } from './rollback/guard.js';
import { initialRollbackStatus, rollbackOptions } from './rollback/state.js';
import { reportRollback } from './rollback/report.js';
import { readSignals } from './watch/signals.js';
import type { OffloadWorker } from './offload/offload.js';
import type { GateHold } from '../core/apply/gate.js';

/** What started a reconcile. A webhook carries its receipt time and the pushed SHA. */
export interface Trigger { kind: 'poll' | 'webhook' | 'manual' | 'start' | 'rollback'; receivedAt: number; after?: string | undefined }

export interface ReconcileRequest { trigger: Trigger; force?: boolean }

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

/**
 * The GitOps reconciler (DESIGN data flow): `source → verify → load → validate → plan → apply`, each
 * a function of gitops/reconcile/ that takes what earlier steps returned, stopping at the first
 * failure; a final step always records status, events, logs and metrics. Idempotent: running it twice on the same commit changes nothing the second time
 * (apart from correcting drift).
 */
export class Reconciler {
  readonly core: Core;
  readonly store: GitOpsStore;
  readonly metrics: GitOpsMetrics;
  readonly source: SourceOptions;
  readonly now: () => number;
  readonly offload: OffloadWorker | undefined;
  status: GitOpsStatus;
  /**
   * the last verified, loaded and validated commit (verification is not repeated per poll); its
   * desired rows only when planned here (the offload worker keeps its own)
   */
  loaded: { sha: string; stamp: string; commit: CommitParts; signer: Signer | undefined; desired: DesiredRow[] | undefined; cases: RoutingCase[] } | undefined;
  /** the last refused commit, so a stalled head is not re-checked and re-announced every poll */
  refused: { sha: string; stamp: string; error: ReconcileError } | undefined;
  /** commits whose signature gitops.verifyAll found good, under the keyring with this stamp */
  goodCommits: { stamp: string; shas: Set<string> } = { stamp: '', shas: new Set() };
  /** stamp of the fetched tags (gitops.quorum only): a new co-signing tag lifts a refusal */
  tagStamp = '';
  /** parsed YAML of the last loaded commit's files, by path and blob id */
  readonly parseCache: ParseCache = new Map();
  /** health-gated rollback: watches applied revisions, pins out rolled-back ones (docs/gitops.md "Automatic rollback") */
  readonly rollback: RollbackGuard;
  /**
   * the write gate, taken when a plan arrives from the offload worker and held through the test
   * and apply steps (gitops/reconcile/plan.ts); released when the reconcile ends
   */
  gateHold: GateHold | undefined;
  private keys: { stamp: string; keys: PublicKey[] } | undefined;
  private seq = 0;

  constructor(deps: ReconcilerDeps) {
    this.core = deps.core;
    this.store = deps.store;
    this.metrics = deps.metrics;
    this.source = deps.source;
    this.now = deps.now ?? Date.now;
    this.offload = deps.offload;
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
      options, read: () => readSignals(deps.core, this.now()), log: deps.core.log.child({ component: 'gitops' }),
      lastApplied: () => deps.store.lastApplied(),
      save: () => {
        try { deps.store.saveStatus(this.status); } catch (err) { deps.core.log.error({ err }, 'saving gitops status failed'); }
      },
      requestRollback: () => deps.requestRollback?.(),
      report: (rec) => reportRollback(deps.core, deps.metrics, rec),
    }, rollback);
  }

  /** Stamp of the trust inputs: a changed keyring file invalidates cached verdicts. */
  keyringStamp(): string {
    const f = this.core.config.gitops.keyringFile;
    if (!f) return '-';
    try { const st = statSync(f); return `${st.mtimeMs}:${st.size}`; } catch { return 'missing'; }
  }

  /**
   * Stamp of everything a refusal depends on besides the head: the keyring file and, with
   * gitops.quorum, the tags fetched with the head (a maintainer's co-signing tag is a new input).
   */
  refusalStamp(): string {
    return `${this.keyringStamp()}|${this.tagStamp}`;
  }

  /** The parsed keyring, re-read when the file changes. Errors: stalled KeyringInvalid. */
  async keyring(): Promise<PublicKey[]> {
    const f = this.core.config.gitops.keyringFile;
    if (!f) throw stalled('KeyringInvalid', 'gitops.requireSignature is true but gitops.keyringFile is not set');
    const stamp = this.keyringStamp();
    if (this.keys?.stamp === stamp) return this.keys.keys;
    let text: string;
    try { text = readFileSync(f, 'utf8'); } catch (err) {
      throw stalled('KeyringInvalid', `cannot read gitops.keyringFile ${f}: ${(err as Error).message}`, { cause: err });
    }
    const keys = await readKeyring(text, f);
    this.keys = { stamp, keys };
    return keys;
  }

  /**
   * Runs one reconcile: the steps (gitops/reconcile/run.ts), then the outcome recorder
   * (gitops/reconcile/outcome.ts). Never throws: the outcome is in the returned status (also
   * kept in `this.status` and persisted). Callers serialise calls (the loop does).
   */
  async reconcile(req: ReconcileRequest): Promise<{ status: GitOpsStatus; error?: ReconcileError }> {
    const started = this.now();
    const reconcileId = `${started.toString(36)}-${++this.seq}`;
    const trace: Trace = { log: this.core.log.child({ component: 'gitops', reconcileId }), timings: {} };
    let outcome: Outcome;
    try {
      outcome = await runSteps(this, req, trace);
    } catch (err) {
      outcome = { result: 'failed', error: err instanceof ReconcileError ? err : transient('ApplyFailed', (err as Error).message, { cause: err }) };
    } finally {
      this.gateHold?.release();
      this.gateHold = undefined;
    }
    try {
      recordOutcome(this, req, trace, outcome, started);
    } catch (err) {
      // recording must not stop the loop (e.g. a full disk while writing the attempt)
      trace.log.error({ err }, 'recording the reconcile outcome failed');
    }
    return outcome.result === 'failed' ? { status: this.status, error: outcome.error } : { status: this.status };
  }
}
