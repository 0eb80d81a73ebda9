import type { Plan } from '../../core/plan/types.js';
import type { Db } from '../../runtime/store/db.js';
import type { CanaryDecision, CanarySpec } from './msg.js';

/** The phase of a canary revision: baking until its decision arrives in the stream. */
export type CanaryPhase = 'baking' | 'promoted' | 'aborted';

/** One canary revision as this node knows it (table `cluster_canary`, migration 0014). */
export interface CanaryRecord {
  revision: string;
  /** stream sequence of the canary plan */
  seq: number;
  spec: CanarySpec;
  originNode: string;
  /** on a canary node: when the plan was applied here (its plan, which an abort takes back: `appliedPlanOf`) */
  appliedAt: number | undefined;
  phase: CanaryPhase;
  decision: CanaryDecision | undefined;
  decidedAt: number | undefined;
}

interface RawRecord {
  revision: string; seq: number; spec: string; origin_node: string; applied_at: number | null;
  phase: CanaryPhase; decision: string | null; decided_at: number | null;
}

/** Every column but `applied_plan` (a whole plan: read only when an abort takes it back). */
const COLUMNS = 'revision, seq, spec, origin_node, applied_at, phase, decision, decided_at';

const fromRaw = (r: RawRecord): CanaryRecord => ({
  revision: r.revision, seq: r.seq, spec: JSON.parse(r.spec) as CanarySpec, originNode: r.origin_node, appliedAt: r.applied_at ?? undefined,
  phase: r.phase, decision: r.decision ? (JSON.parse(r.decision) as CanaryDecision) : undefined, decidedAt: r.decided_at ?? undefined,
});

/**
 * SQLite bookkeeping of canary revisions seen in the config stream. Writes that go with an apply
 * (`applied`, `decide`) are called inside that apply's transaction by the consumer.
 */
export class CanaryStore {
  constructor(private readonly db: Db) {}

  /** Notes a canary plan this node holds (not applied here); a revision already known stays as it is. */
  noted(seq: number, revision: string, spec: CanarySpec, originNode: string): void {
    this.db.prepare("INSERT OR IGNORE INTO cluster_canary (revision, seq, spec, origin_node, phase) VALUES (?, ?, ?, ?, 'baking')")
      .run(revision, seq, JSON.stringify(spec), originNode);
  }

  /** Records the canary plan as this canary node applied it. Call inside the apply transaction. */
  applied(seq: number, revision: string, spec: CanarySpec, originNode: string, plan: Plan, now: number): void {
    this.db.prepare(`INSERT INTO cluster_canary (revision, seq, spec, origin_node, applied_plan, applied_at, phase) VALUES (?, ?, ?, ?, ?, ?, 'baking')
      ON CONFLICT(revision) DO UPDATE SET applied_plan = excluded.applied_plan, applied_at = excluded.applied_at`)
      .run(revision, seq, JSON.stringify(spec), originNode, JSON.stringify(plan), now);
  }

  /** Records the first decision of a baking revision; later ones change nothing. Returns whether it was recorded. */
  decide(d: CanaryDecision, now: number): boolean {
    const r = this.db.prepare("UPDATE cluster_canary SET phase = ?, decision = ?, decided_at = ? WHERE revision = ? AND phase = 'baking'")
      .run(d.verdict === 'promote' ? 'promoted' : 'aborted', JSON.stringify(d), now, d.revision);
    return r.changes > 0;
  }

  /** One revision's record, or undefined. */
  get(revision: string): CanaryRecord | undefined {
    const r = this.db.prepare(`SELECT ${COLUMNS} FROM cluster_canary WHERE revision = ?`).get(revision) as RawRecord | undefined;
    return r ? fromRaw(r) : undefined;
  }

  /** The latest canary revision (by stream sequence), baking or decided, or undefined. */
  latest(): CanaryRecord | undefined {
    const r = this.db.prepare(`SELECT ${COLUMNS} FROM cluster_canary ORDER BY seq DESC LIMIT 1`).get() as RawRecord | undefined;
    return r ? fromRaw(r) : undefined;
  }

  /** The baking revision with the highest sequence, or undefined. */
  baking(): CanaryRecord | undefined {
    const r = this.db.prepare(`SELECT ${COLUMNS} FROM cluster_canary WHERE phase = 'baking' ORDER BY seq DESC LIMIT 1`).get() as RawRecord | undefined;
    return r ? fromRaw(r) : undefined;
  }

  /** The plan this canary node applied for `revision` (what an abort takes back), or undefined. */
  appliedPlanOf(revision: string): Plan | undefined {
    const r = this.db.prepare('SELECT applied_plan FROM cluster_canary WHERE revision = ?').get(revision) as { applied_plan: string | null } | undefined;
    return r?.applied_plan ? (JSON.parse(r.applied_plan) as Plan) : undefined;
  }
}
