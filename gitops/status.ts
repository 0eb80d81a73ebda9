import type { Db } from '../runtime/store/db.js';
import type { ErrorClass, Reason } from './errors.js';
import type { RollbackStatus } from './rollback/state.js';

/** The controller's condition, Flux style: Ready with a PascalCase reason and a message. */
export interface GitOpsStatus {
  enabled: boolean;
  repoURL: string | null;
  branch: string;
  ready: boolean;
  /** Succeeded, or the reason of the last failure */
  reason: Reason | 'Progressing';
  message: string;
  /** null when ready */
  errorClass: ErrorClass | null;
  /** every problem of the last failure (validation errors as file:line) */
  problems: string[];
  /** head of the branch at the last fetch */
  observedRevision: string | null;
  lastAppliedRevision: string | null;
  lastAppliedAt: number | null;
  lastSigner: string | null;
  lastAttemptAt: number | null;
  /** counts of the last non-empty plan applied */
  lastPlan: { create: number; update: number; delete: number } | null;
  /** git rows that differed from the applied commit at the last reconcile, and were corrected */
  drift: string[];
  /**
   * The plan of the branch head held back by a safety threshold (TooManyDeletes, TooManyUpdates,
   * TooMuchTrafficChanged), as the kubectl-style diff: what `gslbctl reconcile --force` would
   * apply. Null otherwise.
   */
  pendingPlan?: PendingPlan | null;
  /** consecutive failed reconciles since the daemon started (a poll that finds the refused head again counts) */
  failures: number;
  /**
   * when the current run of failures began (the first failed attempt after the last success,
   * kept across restarts); null while ready
   */
  failingSince: number | null;
  /** the latest failed attempt, refreshed by every failing poll; kept after recovery for reference */
  lastError: LastError | null;
  nextAttemptAt: number | null;
  /**
   * health-gated rollback (docs/gitops.md "Automatic rollback"): the watch in progress, the last
   * good revision, the last rollback and the pinned-out revisions; absent without gitops.repoURL
   */
  rollback?: RollbackStatus;
}

/** A held-back plan: its revision, why it is held, its counts and its diff. */
export interface PendingPlan { revision: string; reason: string; counts: { create: number; update: number; delete: number }; text: string }

/** The latest failed attempt: when, why (PascalCase reason and class) and the message. */
export interface LastError { at: number; reason: Reason; errorClass: ErrorClass; message: string }

/**
 * Records a failed attempt at `at` on `s`: failures, lastAttemptAt and lastError advance on every
 * call (every poll of a stalled or unreachable repo), failingSince is set by the first one. A
 * `waiting` outcome is not a failure: only lastAttemptAt moves. Mutates `s`.
 */
export function recordFailure(s: GitOpsStatus, at: number, e: { reason: Reason; errorClass: ErrorClass; message: string }): void {
  s.lastAttemptAt = at;
  if (e.errorClass === 'waiting') return;
  s.failures += 1;
  s.failingSince ??= at;
  s.lastError = { at, reason: e.reason, errorClass: e.errorClass, message: e.message };
}

/** Records a successful attempt at `at`: the failure run ends (lastError stays). Mutates `s`. */
export function recordSuccess(s: GitOpsStatus, at: number): void {
  s.lastAttemptAt = at;
  s.failures = 0;
  s.failingSince = null;
}

/** A revision as `gslbctl history` shows it. */
export interface HistoryEntry {
  seq: number;
  sha: string;
  appliedAt: number;
  creates: number;
  updates: number;
  deletes: number;
  signer: string | null;
  signerUserId: string | null;
  author: string | null;
  committer: string | null;
  message: string | null;
  commitTime: number | null;
  forced: boolean;
  trigger: string | null;
  drift: boolean;
  /** id of the applied plan (core/plan/plan-id.ts); null for revisions recorded before plan ids existed */
  planId: string | null;
}

/** A refused revision. */
export interface Attempt { seq: number; sha: string; at: number; reason: string; class: string; message: string; problems: string[]; trigger: string }

/** Persistence of controller status, revision history and refused attempts (migration 0004). */
export class GitOpsStore {
  constructor(private readonly db: Db) {}

  /** The last stored status, or undefined. */
  loadStatus(): GitOpsStatus | undefined {
    const r = this.db.prepare('SELECT data FROM gitops_status WHERE id = 1').get() as { data: string } | undefined;
    return r ? (JSON.parse(r.data) as GitOpsStatus) : undefined;
  }

  saveStatus(s: GitOpsStatus): void {
    this.db.prepare('INSERT INTO gitops_status (id, data) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET data = excluded.data').run(JSON.stringify(s));
  }

  /** SHA of the last applied git revision (from the revision history), or undefined. */
  lastApplied(): string | undefined {
    const r = this.db.prepare("SELECT revision FROM revisions WHERE origin = 'git' ORDER BY seq DESC LIMIT 1").get() as { revision: string } | undefined;
    return r?.revision;
  }

  /** The meta recorded with the latest apply of git revision `sha` (signer, author, …), or undefined. */
  revisionMeta(sha: string): Record<string, unknown> | undefined {
    const r = this.db.prepare("SELECT meta FROM revisions WHERE origin = 'git' AND revision = ? ORDER BY seq DESC LIMIT 1").get(sha) as { meta: string } | undefined;
    if (!r) return undefined;
    try { return JSON.parse(r.meta) as Record<string, unknown>; } catch { return {}; }
  }

  /** Applied git revisions, newest first. */
  history(limit = 50): HistoryEntry[] {
    const rows = this.db.prepare("SELECT seq, revision, applied_at, creates, updates, deletes, meta FROM revisions WHERE origin = 'git' ORDER BY seq DESC LIMIT ?")
      .all(limit) as { seq: number; revision: string; applied_at: number; creates: number; updates: number; deletes: number; meta: string }[];
    return rows.map((r) => {
      const m = JSON.parse(r.meta) as Record<string, unknown>;
      const str = (k: string) => (typeof m[k] === 'string' ? (m[k] as string) : null);
      return {
        seq: r.seq, sha: r.revision, appliedAt: r.applied_at, creates: r.creates, updates: r.updates, deletes: r.deletes,
        signer: str('signer'), signerUserId: str('signerUserId'), author: str('author'), committer: str('committer'), message: str('message'),
        commitTime: typeof m.commitTime === 'number' ? m.commitTime : null, forced: m.forced === true, trigger: str('trigger'), drift: m.drift === true, planId: str('planId'),
      };
    });
  }

  recordAttempt(a: Omit<Attempt, 'seq'>): void {
    this.db.prepare('INSERT INTO gitops_attempts (sha, at, reason, class, message, problems, trigger) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(a.sha, a.at, a.reason, a.class, a.message, JSON.stringify(a.problems), a.trigger);
    // keep the table bounded: the last 1000 refusals are plenty to debug with
    this.db.prepare('DELETE FROM gitops_attempts WHERE seq <= (SELECT MAX(seq) - 1000 FROM gitops_attempts)').run();
  }

  attempts(limit = 20): Attempt[] {
    const rows = this.db.prepare('SELECT * FROM gitops_attempts ORDER BY seq DESC LIMIT ?').all(limit) as (Omit<Attempt, 'problems'> & { problems: string })[];
    return rows.map((r) => ({ ...r, problems: JSON.parse(r.problems) as string[] }));
  }
}
