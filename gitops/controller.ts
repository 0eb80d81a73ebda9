import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Core } from '../runtime/app.js';
import { parseDuration } from '../runtime/config/duration.js';
import { createGitOpsMetrics, type GitOpsMetrics } from './metrics.js';
import { GitOpsStore, type GitOpsStatus } from './status.js';
import { Reconciler, type ReconcileRequest } from './reconcile.js';
import { ReconcileLoop } from './loop.js';
import type { ReconcileError } from './errors.js';
import { forgetRepo } from './source/git-source.js';
import { OffloadWorker } from './offload/offload.js';

/**
 * The GitOps controller of one daemon: store, metrics, reconciler and loop. Without
 * gitops.repoURL only the store is live (status says NotConfigured; plans against the daemon still
 * work for `gslbctl diff`).
 */
export class GitOpsController {
  readonly store: GitOpsStore;
  readonly metrics: GitOpsMetrics;
  readonly reconciler: Reconciler | undefined;
  readonly loop: ReconcileLoop | undefined;
  readonly offload: OffloadWorker | undefined;
  private cleanup: (() => void) | undefined;

  constructor(readonly core: Core) {
    this.store = new GitOpsStore(core.db);
    this.metrics = createGitOpsMetrics(core.metrics);
    const g = core.config.gitops;
    // off the DNS thread when the database is a file the worker can open too (docs/gitops.md);
    // started on first use: without a repo only POST /gitops/plan uses it
    const offload = core.config.database.path === ':memory:' ? undefined
      : new OffloadWorker({ dbPath: resolve(core.config.database.path), config: core.config, env: { ...core.env } }, core.log.child({ component: 'gitops' }));
    this.offload = offload;
    if (!g.repoURL) return;
    let gitdir: string;
    if (core.config.database.path === ':memory:') {
      gitdir = mkdtempSync(join(tmpdir(), 'gslbd-gitops-'));
      this.cleanup = () => rmSync(gitdir, { recursive: true, force: true });
    } else {
      // one cache per repo URL next to the database, kept across restarts (ancestry needs history)
      const id = createHash('sha256').update(g.repoURL).digest('hex').slice(0, 16);
      gitdir = join(dirname(resolve(core.config.database.path)), 'gitops-cache', id);
      mkdirSync(gitdir, { recursive: true });
    }
    const token = g.auth.tokenEnv ? core.env[g.auth.tokenEnv] || undefined : undefined;
    if (offload) core.ports.walCheckpoint = () => offload.checkpoint();
    this.reconciler = new Reconciler({
      core, store: this.store, metrics: this.metrics, offload: this.offload,
      source: { url: g.repoURL, branch: g.branch, gitdir, token, sshKeyPath: g.auth.sshKeyPath, tags: g.quorum.length > 0 },
      // a breach runs the rollback through the loop: one reconcile at a time
      requestRollback: () => { void this.loop?.trigger({ trigger: { kind: 'rollback', receivedAt: Date.now() } }); },
    });
    this.loop = new ReconcileLoop(this.reconciler, { intervalMs: parseDuration(g.pollInterval) ?? 30_000 });
  }

  /** The controller status (NotConfigured without a repo URL). */
  status(): GitOpsStatus {
    if (this.reconciler) return this.reconciler.status;
    const g = this.core.config.gitops;
    return {
      enabled: false, repoURL: null, branch: g.branch, ready: false, reason: 'NotConfigured', message: 'gitops.repoURL is not set',
      errorClass: null, problems: [], observedRevision: null, lastAppliedRevision: this.store.lastApplied() ?? null, lastAppliedAt: null,
      lastSigner: null, lastAttemptAt: null, lastPlan: null, drift: [], failures: 0, failingSince: null, lastError: null, nextAttemptAt: null,
    };
  }

  /** Runs (or queues) one reconcile and resolves with its outcome; undefined without a repo. */
  trigger(req: ReconcileRequest): Promise<{ status: GitOpsStatus; error?: ReconcileError }> | undefined {
    return this.loop?.trigger(req);
  }

  start(): void {
    this.reconciler?.rollback.start();
    this.loop?.start();
  }

  async stop(): Promise<void> {
    this.reconciler?.rollback.stop();
    await this.loop?.stop();
    if (this.core.ports.walCheckpoint && this.offload) this.core.ports.walCheckpoint = undefined;
    await this.offload?.close();
    if (this.reconciler) forgetRepo(this.reconciler.source.gitdir);
    this.cleanup?.();
  }
}
