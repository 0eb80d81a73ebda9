import type { Statement } from 'better-sqlite3';
import type { Db } from '../../store/db.js';
import type { StoredFile, SubmissionFields, SubmissionRecord } from './types.js';

/** A submission about to be stored (the id and claim come from the store). */
export type NewSubmission = Omit<SubmissionRecord, 'id' | 'claimedAt' | 'claimedBy'>;

/**
 * Makes a batch of submissions durable before they are written here (the cluster's form stream,
 * docs/forms.md "In a cluster"): resolves, per submission, to the id every node gives it, or to
 * why it could not be made durable (that post is refused, nothing stored).
 */
export type DurableWrite = (batch: readonly { s: NewSubmission; actionIds: readonly string[] }[]) => Promise<PromiseSettledResult<number>[]>;

/** The key every node gives the delivery of `actionId` queued by stream message `seq` for submission `sid`. */
export function deliveryKey(seq: number, sid: number, actionId: string): string {
  return `${seq}.${sid}.${actionId}`;
}

type Pending = { s: NewSubmission; actionIds: readonly string[]; resolve: (id: number) => void; reject: (err: unknown) => void; id?: number };

/** Sort keys of the submission list, the first the default. */
export const SUBMISSION_SORTS = ['created_at', 'id'] as const;
export type SubmissionSort = (typeof SUBMISSION_SORTS)[number];

/** What the submission list selects (docs/forms.md "Submissions"). */
export interface SubmissionQuery {
  page: number;
  limit: number;
  sort: SubmissionSort;
  order: 'asc' | 'desc';
  /** include spam (`getSpam`); without it, spam is left out */
  spam: boolean;
  /** only claimed (true) or unclaimed (false) submissions */
  claimed?: boolean;
  /** created at or after / before (ms) */
  since?: number;
  until?: number;
}

interface Row {
  id: number; tenant_id: string; form_id: string; created_at: number; fields: string; files: string; email: string | null;
  spam: number; spam_reason: string | null; ip: string | null; user_agent: string | null; claimed_at: number | null; claimed_by: string | null;
}

function recordOf(r: Row): SubmissionRecord {
  return {
    id: r.id, tenantId: r.tenant_id, formId: r.form_id, createdAt: r.created_at, fields: JSON.parse(r.fields) as SubmissionFields,
    files: JSON.parse(r.files) as StoredFile[], email: r.email, spam: r.spam === 1, spamReason: r.spam_reason, ip: r.ip, userAgent: r.user_agent,
    claimedAt: r.claimed_at, claimedBy: r.claimed_by,
  };
}

/** The calendar month (UTC) of a time, as `usage` keys it: `2026-11`. */
export function monthOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

/**
 * Submissions, the field names each form received, monthly usage and the delivery queue, in the
 * node-local SQLite tables of migration 0009. A submission and its queued deliveries are written
 * in one transaction, so a delivery never points at a submission that is not there and a stored
 * submission never misses its deliveries. Statements are prepared once; the insert path is the
 * hot path of the public endpoint.
 */
export class SubmissionStore {
  private readonly insertStmt: Statement;
  private readonly insertIdStmt: Statement;
  private readonly queueKeyStmt: Statement;
  private readonly fieldStmt: Statement;
  private readonly usageStmt: Statement;
  private readonly queueStmt: Statement;
  private readonly emailStmt: Statement;
  /** field names known to be stored, per form, so the insert path skips them */
  private readonly knownFields = new Map<string, Set<string>>();
  /** submissions this month per tenant (`<tenant> <month>`), read once from the table, then counted here */
  private readonly monthCounts = new Map<string, number>();
  /** submissions waiting for the next group commit */
  private pending: Pending[] = [];
  /** submissions being made durable (counted against the month like the pending ones) */
  private publishing = new Set<Pending>();
  /** set in a cluster: a batch is made durable in the stream before it is written */
  private durable: DurableWrite | undefined;

  constructor(private readonly db: Db) {
    this.insertStmt = db.prepare(`INSERT INTO form_submissions (tenant_id, form_id, created_at, fields, files, file_bytes, email, spam, spam_reason, ip, user_agent)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.insertIdStmt = db.prepare(`INSERT OR IGNORE INTO form_submissions (id, tenant_id, form_id, created_at, fields, files, file_bytes, email, spam, spam_reason, ip, user_agent)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.queueKeyStmt = db.prepare(`INSERT OR IGNORE INTO form_deliveries (submission_id, form_id, action_id, event, state, next_at, created_at, updated_at, cluster_key)
      VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?)`);
    this.fieldStmt = db.prepare('INSERT OR IGNORE INTO form_received_fields (form_id, name, first_seen) VALUES (?, ?, ?)');
    this.usageStmt = db.prepare(`INSERT INTO form_usage (tenant_id, month, submissions) VALUES (?, ?, 1)
      ON CONFLICT (tenant_id, month) DO UPDATE SET submissions = submissions + 1`);
    this.queueStmt = db.prepare(`INSERT INTO form_deliveries (submission_id, form_id, action_id, state, next_at, created_at, updated_at)
      VALUES (?, ?, ?, 'pending', ?, ?, ?)`);
    this.emailStmt = db.prepare('SELECT COUNT(*) AS n FROM form_submissions WHERE form_id = ? AND email = ? AND created_at > ?');
  }

  /**
   * Stores a submission with a delivery queued for each of `actionIds`, records the field names
   * the form had not received before, and counts it in its tenant's month unless it is spam (spam
   * is kept, flagged, and costs the workspace nothing). Resolves to the new id once committed.
   *
   * Group commit: the submissions that arrive within one turn of the event loop are written in one
   * transaction (each with its own rows, exactly as alone), because a commit costs far more than
   * an insert; under load this multiplies the rate, and alone a submission waits one `setImmediate`.
   */
  insert(s: NewSubmission, actionIds: readonly string[]): Promise<number> {
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => this.flush());
      this.pending.push({ s, actionIds, resolve, reject });
    });
  }

  /**
   * From now on, every batch is made durable by `durable` before it is written, under the ids it
   * returns (the cluster's stream sequences): one round trip per batch, not per post.
   */
  writeThrough(durable: DurableWrite): void {
    this.durable = durable;
  }

  /** Writes the pending submissions in one transaction (made durable first in a cluster) and settles their promises. */
  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    if (!this.durable) return this.commit(batch);
    for (const p of batch) this.publishing.add(p);
    this.durable(batch.map((p) => ({ s: p.s, actionIds: p.actionIds }))).then((results) => {
      const ok: Pending[] = [];
      results.forEach((r, i) => {
        const p = batch[i]!;
        if (r.status === 'fulfilled') ok.push({ ...p, id: r.value });
        else p.reject(r.reason);
      });
      this.commit(ok);
    }, (err: unknown) => { for (const p of batch) p.reject(err); }).finally(() => { for (const p of batch) this.publishing.delete(p); });
  }

  private commit(batch: readonly Pending[]): void {
    let ids: { id: number; fresh: boolean }[];
    try {
      ids = this.db.transaction(() => batch.map((p) => this.write(p.s, p.actionIds, p.id)))();
    } catch (err) {
      for (const p of batch) p.reject(err);
      return;
    }
    batch.forEach((p, i) => {
      if (ids[i]!.fresh) this.afterCommit(p.s);
      p.resolve(ids[i]!.id);
    });
  }

  /**
   * Writes a submission the cluster's stream carries (inside the caller's transaction), under its
   * stream id, with its deliveries keyed for every node alike. Idempotent: false when it is there already.
   */
  applyDurable(id: number, s: NewSubmission, actionIds: readonly string[]): boolean {
    const fresh = this.write(s, actionIds, id).fresh;
    if (fresh) this.afterCommit(s);
    return fresh;
  }

  /**
   * The rows of one submission (inside the caller's transaction); returns its id. With `id` (a
   * submission of the cluster's stream) the row takes that id, its deliveries their cluster keys,
   * and a submission already there is left as it is (`fresh` false).
   */
  private write(s: NewSubmission, actionIds: readonly string[], id?: number): { id: number; fresh: boolean } {
    const fileBytes = s.files.reduce((n, f) => n + f.size, 0);
    const values = [s.tenantId, s.formId, s.createdAt, JSON.stringify(s.fields), JSON.stringify(s.files), fileBytes, s.email, s.spam ? 1 : 0, s.spamReason, s.ip, s.userAgent];
    let sid: number;
    if (id === undefined) {
      sid = Number(this.insertStmt.run(...values).lastInsertRowid);
    } else {
      if (this.insertIdStmt.run(id, ...values).changes === 0) return { id, fresh: false };
      sid = id;
    }
    const known = this.knownFieldsOf(s.formId);
    for (const n of Object.keys(s.fields)) if (!known.has(n)) this.fieldStmt.run(s.formId, n, s.createdAt);
    if (!s.spam) this.usageStmt.run(s.tenantId, monthOf(s.createdAt));
    for (const a of actionIds) {
      if (id === undefined) this.queueStmt.run(sid, s.formId, a, s.createdAt, s.createdAt, s.createdAt);
      else this.queueKeyStmt.run(sid, s.formId, a, 'submission.created', s.createdAt, s.createdAt, s.createdAt, deliveryKey(id, sid, a));
    }
    return { id: sid, fresh: true };
  }

  /**
   * Queues, for a message `seq` of the cluster's stream (a claim, a replay, a reminder), a
   * delivery of each listed action for each submission, keyed for every node alike; a delivery
   * already queued is kept. Inside the caller's transaction; returns how many were new.
   */
  queueDurable(formId: string, seq: number, event: string, jobs: readonly { submissionId: number; actionIds: readonly string[] }[], now: number): number {
    let n = 0;
    for (const j of jobs) for (const a of j.actionIds) n += this.queueKeyStmt.run(j.submissionId, formId, a, event, now, now, now, deliveryKey(seq, j.submissionId, a)).changes;
    return n;
  }

  /** The form's unclaimed, unreminded, non-spam submissions received before `before` (at most `limit`), not marked. */
  dueReminders(formId: string, before: number, limit: number): SubmissionRecord[] {
    return (this.db.prepare('SELECT * FROM form_submissions WHERE form_id = ? AND claimed_at IS NULL AND reminded_at IS NULL AND spam = 0 AND created_at <= ? ORDER BY created_at LIMIT ?')
      .all(formId, before, limit) as Row[]).map(recordOf);
  }

  /** Marks submissions reminded (inside the caller's transaction). */
  markReminded(formId: string, ids: readonly number[], now: number): void {
    const mark = this.db.prepare('UPDATE form_submissions SET reminded_at = ? WHERE form_id = ? AND id = ? AND reminded_at IS NULL');
    for (const id of ids) mark.run(now, formId, id);
  }

  /** The caches, once a submission is committed: its field names known, its month counted. */
  private afterCommit(s: NewSubmission): void {
    const known = this.knownFieldsOf(s.formId);
    for (const n of Object.keys(s.fields)) known.add(n);
    if (s.spam) return;
    const key = `${s.tenantId} ${monthOf(s.createdAt)}`;
    const n = this.monthCounts.get(key);
    if (n !== undefined) this.monthCounts.set(key, n + 1);
  }

  /** Queues a delivery of each listed action for each submission, in one transaction; returns how many were queued. */
  queue(formId: string, jobs: readonly { submissionId: number; actionIds: readonly string[] }[], now: number): number {
    return this.db.transaction(() => {
      let n = 0;
      for (const j of jobs) for (const a of j.actionIds) { this.queueStmt.run(j.submissionId, formId, a, now, now, now); n++; }
      return n;
    })();
  }

  /**
   * Marks the form's unclaimed, unreminded, non-spam submissions received before `before` as
   * reminded (at most `limit`) and returns them: each is reminded once.
   */
  takeDueReminders(formId: string, before: number, now: number, limit: number): SubmissionRecord[] {
    return this.db.transaction(() => {
      const rows = this.dueReminders(formId, before, limit);
      this.markReminded(formId, rows.map((r) => r.id), now);
      return rows;
    })();
  }

  /** Queues deliveries of an event other than the submission itself (`submission.claimed`) to these actions. */
  queueEvent(formId: string, submissionId: number, actionIds: readonly string[], event: string, now: number): void {
    const stmt = this.db.prepare(`INSERT INTO form_deliveries (submission_id, form_id, action_id, event, state, next_at, created_at, updated_at)
      VALUES (?, ?, ?, ?, 'pending', ?, ?, ?)`);
    this.db.transaction(() => { for (const a of actionIds) stmt.run(submissionId, formId, a, event, now, now, now); })();
  }

  /** Non-spam submissions of a tenant in the month (UTC) of `at`, those waiting for the group commit included. */
  submissionsInMonth(tenantId: string, at: number): number {
    const month = monthOf(at);
    const key = `${tenantId} ${month}`;
    let n = this.monthCounts.get(key);
    if (n === undefined) {
      const r = this.db.prepare('SELECT submissions FROM form_usage WHERE tenant_id = ? AND month = ?').get(tenantId, month) as { submissions: number } | undefined;
      n = r?.submissions ?? 0;
      this.monthCounts.set(key, n);
    }
    for (const p of [...this.pending, ...this.publishing]) if (!p.s.spam && p.s.tenantId === tenantId && monthOf(p.s.createdAt) === month) n++;
    return n;
  }

  /** How many submissions (spam included) a form has. */
  countOf(formId: string): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM form_submissions WHERE form_id = ?').get(formId) as { n: number }).n;
  }

  /** Bytes of files a tenant has stored. */
  fileBytes(tenantId: string): number {
    const r = this.db.prepare('SELECT COALESCE(SUM(file_bytes), 0) AS n FROM form_submissions WHERE tenant_id = ? AND file_bytes > 0').get(tenantId) as { n: number };
    return r.n;
  }

  /** Submissions (spam included) from this address to this form since `since` (ms). */
  fromEmailSince(formId: string, email: string, since: number): number {
    return (this.emailStmt.get(formId, email, since) as { n: number }).n;
  }

  /** One page of a form's submissions and how many match in all. */
  list(formId: string, q: SubmissionQuery): { rows: SubmissionRecord[]; total: number } {
    const where = ['form_id = ?'];
    const args: (string | number)[] = [formId];
    if (!q.spam) where.push('spam = 0');
    if (q.claimed !== undefined) where.push(q.claimed ? 'claimed_at IS NOT NULL' : 'claimed_at IS NULL');
    if (q.since !== undefined) { where.push('created_at >= ?'); args.push(q.since); }
    if (q.until !== undefined) { where.push('created_at < ?'); args.push(q.until); }
    const cond = where.join(' AND ');
    const total = (this.db.prepare(`SELECT COUNT(*) AS n FROM form_submissions WHERE ${cond}`).get(...args) as { n: number }).n;
    const dir = q.order === 'asc' ? 'ASC' : 'DESC';
    const order = q.sort === 'id' ? `id ${dir}` : `created_at ${dir}, id ${dir}`;
    const rows = this.db.prepare(`SELECT * FROM form_submissions WHERE ${cond} ORDER BY ${order} LIMIT ? OFFSET ?`)
      .all(...args, q.limit, (q.page - 1) * q.limit) as Row[];
    return { rows: rows.map(recordOf), total };
  }

  /** A form's non-spam submissions received in [start, end), oldest first, at most `limit`. */
  inWindow(formId: string, start: number, end: number, limit: number): SubmissionRecord[] {
    const rows = this.db.prepare('SELECT * FROM form_submissions WHERE form_id = ? AND spam = 0 AND created_at >= ? AND created_at < ? ORDER BY created_at, id LIMIT ?')
      .all(formId, start, end, limit) as Row[];
    return rows.map(recordOf);
  }

  /** A form's submission by id, or undefined (another form's included). */
  get(formId: string, id: number): SubmissionRecord | undefined {
    const r = this.db.prepare('SELECT * FROM form_submissions WHERE form_id = ? AND id = ?').get(formId, id) as Row | undefined;
    return r && recordOf(r);
  }

  /** The ids among `ids` that are submissions of the form. */
  existing(formId: string, ids: readonly number[]): Set<number> {
    if (ids.length === 0) return new Set();
    const rows = this.db.prepare(`SELECT id FROM form_submissions WHERE form_id = ? AND id IN (${ids.map(() => '?').join(',')})`).all(formId, ...ids) as { id: number }[];
    return new Set(rows.map((r) => r.id));
  }

  /** Marks an unclaimed submission claimed; false when it was claimed already (nothing changes). */
  claim(formId: string, id: number, by: string, at: number): boolean {
    return this.db.prepare('UPDATE form_submissions SET claimed_at = ?, claimed_by = ? WHERE form_id = ? AND id = ? AND claimed_at IS NULL').run(at, by, formId, id).changes === 1;
  }

  /** The field names a form received, in the order it first received them. */
  receivedFields(formId: string): string[] {
    return (this.db.prepare('SELECT name FROM form_received_fields WHERE form_id = ? ORDER BY first_seen, name').all(formId) as { name: string }[]).map((r) => r.name);
  }

  /** Queued deliveries of a form by state (for the API and tests). */
  deliveryCounts(formId: string): Record<string, number> {
    const rows = this.db.prepare('SELECT state, COUNT(*) AS n FROM form_deliveries WHERE form_id = ? GROUP BY state').all(formId) as { state: string; n: number }[];
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  }

  /** Deletes everything of a form (submissions, deliveries, received names); returns the files to remove. */
  removeForm(formId: string): { submissions: number; files: StoredFile[] } {
    const files = (this.db.prepare("SELECT files FROM form_submissions WHERE form_id = ? AND files != '[]'").all(formId) as { files: string }[])
      .flatMap((r) => JSON.parse(r.files) as StoredFile[]);
    const submissions = this.db.transaction(() => {
      this.db.prepare('DELETE FROM form_deliveries WHERE form_id = ?').run(formId);
      this.db.prepare('DELETE FROM form_received_fields WHERE form_id = ?').run(formId);
      return this.db.prepare('DELETE FROM form_submissions WHERE form_id = ?').run(formId).changes;
    })();
    this.knownFields.delete(formId);
    return { submissions, files };
  }

  private knownFieldsOf(formId: string): Set<string> {
    let set = this.knownFields.get(formId);
    if (!set) {
      set = new Set(this.receivedFields(formId));
      this.knownFields.set(formId, set);
    }
    return set;
  }
}
