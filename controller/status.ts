import type { Db } from '../runtime/store/db.js';
import type { ErrorClass, Reason } from './errors.js';

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
  /** consecutive failed reconciles */
  failures: number;
  nextAttemptAt: number | null;
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
        commitTime: typeof m.commitTime === 'number' ? m.commitTime : null, forced: m.forced === true, trigger: str('trigger'), drift: m.drift === true,
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
