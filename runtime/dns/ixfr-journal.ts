import { createHash } from 'node:crypto';
import type { ApplyHook } from '../../core/apply/hooks.js';
import { Slicer, runAtOnce, runSliced } from '../../core/apply/slicer.js';
import type { Plan } from '../../core/plan/types.js';
import type { Snapshot } from '../../core/snapshot/snapshot.js';
import type { Config } from '../config/types.js';
import type { Logger } from '../log/logger.js';
import type { Db } from '../store/db.js';
import { MAX_JOURNAL_NAMES, NameMaps, planDiffSteps, recordKey, type JournalRecord, type ZoneDiff } from './ixfr-diff.js';
import { changesZone, type ZoneSerial } from './zone-serial.js';

/** The net difference of a zone from a client's serial to the current one, condensed (RFC 1995 §5). */
export interface Condensed { deleted: JournalRecord[]; added: JournalRecord[] }

type Stored = [owner: string, type: number, ttl: number, rdata: string, tenant: string];
const encode = (rs: readonly JournalRecord[]): string => JSON.stringify(rs.map((r): Stored => [r.owner, r.type, r.ttl, r.rdata.toString('base64'), r.tenant]));
const decode = (s: string): JournalRecord[] => (JSON.parse(s) as Stored[]).map(([owner, type, ttl, rdata, tenant]) => ({ owner, type, ttl, rdata: Buffer.from(rdata, 'base64'), tenant }));

/**
 * What the differences depend on besides the rows: the served domain and the tenancy rules (which
 * names are served for whom). A journal made under other settings is emptied at start.
 */
export function journalFingerprint(cfg: Config): string {
  const t = cfg.tenancy;
  const basis = { domain: cfg.dns.domain ?? null, nsNames: cfg.dns.nsNames ?? null, operator: t.operatorTenant, delegations: t.delegations, requireDelegation: t.requireDelegation };
  return createHash('sha256').update(JSON.stringify(basis)).digest('hex');
}

interface StepRow { seq: number; from_serial: number; to_serial: number; complete: number }

/**
 * The IXFR journal (docs/dns.md "Incremental transfers"; migration 0018): for each of the last
 * `dns.axfr.journalSize` SOA serial steps, the record-level difference of every zone the step
 * changed. Written by an apply hook inside the transaction that advances the serial (so it rolls
 * back with the plan, survives a restart, and is the same on every node that applied the same
 * plans), worked out from the plan's changed rows (ixfr-diff.ts): by `prepare` in slices for a
 * sliced apply, else in `inTransaction`. Register its hook after the serial's.
 */
export class IxfrJournal {
  private readonly maps = new NameMaps();
  /** the differences `prepare` worked out, for the plan whose transaction comes next */
  private staged: { plan: Plan; diffs: ZoneDiff[] | undefined } | undefined;
  /** a background rebuild of the name maps is under way */
  private rebuilding = false;
  private readonly insertStep;
  private readonly insertDiff;
  private readonly trim;
  private readonly steps;
  private readonly diffs;

  constructor(db: Db, private readonly cfg: Config, private readonly serial: ZoneSerial, private readonly current: () => Snapshot, private readonly log: Logger) {
    const fp = journalFingerprint(cfg);
    const had = db.prepare('SELECT fingerprint FROM dns_ixfr_meta WHERE id = 1').get() as { fingerprint: string } | undefined;
    if (had?.fingerprint !== fp) {
      db.transaction(() => {
        db.prepare('DELETE FROM dns_ixfr_step').run();
        db.prepare('DELETE FROM dns_ixfr_diff').run();
        db.prepare('INSERT INTO dns_ixfr_meta (id, fingerprint) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET fingerprint = excluded.fingerprint').run(fp);
      })();
      if (had) log.info('dns IXFR journal emptied: the served domain or the tenancy settings changed');
    }
    this.insertStep = db.prepare('INSERT INTO dns_ixfr_step (from_serial, to_serial, revision, complete) VALUES (?, ?, ?, ?)');
    this.insertDiff = db.prepare('INSERT INTO dns_ixfr_diff (seq, zone, whole, deleted, added) VALUES (?, ?, ?, ?, ?)');
    const keep = Math.max(1, cfg.dns.axfr.journalSize);
    const dropSteps = db.prepare('DELETE FROM dns_ixfr_step WHERE seq <= (SELECT MAX(seq) FROM dns_ixfr_step) - ?');
    const dropDiffs = db.prepare('DELETE FROM dns_ixfr_diff WHERE seq < (SELECT MIN(seq) FROM dns_ixfr_step)');
    this.trim = () => { dropSteps.run(keep); dropDiffs.run(); };
    this.steps = db.prepare('SELECT seq, from_serial, to_serial, complete FROM dns_ixfr_step ORDER BY seq');
    this.diffs = db.prepare('SELECT whole, deleted, added FROM dns_ixfr_diff WHERE zone = ? AND seq >= ? AND seq <= ? ORDER BY seq');
  }

  /** The apply hook (register it after ZoneSerial's, which sets the serial it records). */
  hook(): ApplyHook {
    return {
      prepare: async (plan, next, prev, slicer) => {
        this.staged = undefined;
        if (!changesZone(plan) || !this.records(plan)) return;
        if (this.maps.at !== prev) await runSliced(this.maps.build(prev), slicer);
        this.staged = { plan, diffs: await runSliced(planDiffSteps(plan, prev, next, this.cfg, this.maps), slicer) };
      },
      inTransaction: (plan, _opts, next, prev) => {
        const staged = this.staged?.plan === plan ? this.staged : undefined;
        this.staged = undefined;
        const to = this.serial.advancing;
        if (to === undefined) return;
        let diffs: ZoneDiff[] | undefined;
        if (staged) diffs = staged.diffs;
        else if (this.records(plan)) {
          if (this.maps.at !== prev) runAtOnce(this.maps.build(prev));
          diffs = runAtOnce(planDiffSteps(plan, prev, next, this.cfg, this.maps));
        }
        this.write(plan.revision, this.serial.current, to, diffs);
      },
      afterSwap: (plan, next, prev) => {
        if (this.maps.at === prev && this.records(plan)) this.maps.advance(plan, next);
        else this.rebuildLater();
      },
    };
  }

  /** True when the differences of `plan` are worked out (small enough to record). */
  private records(plan: Plan): boolean {
    return plan.changes.length <= MAX_JOURNAL_NAMES;
  }

  /** Builds the name maps of the current snapshot in slices, off the apply (after a large plan, and at start). */
  rebuildLater(): void {
    this.maps.at = undefined;
    if (this.rebuilding) return;
    this.rebuilding = true;
    const run = async () => {
      // an apply that needs the maps first builds them itself: then this one is not needed
      while (this.maps.at === undefined) {
        const s = this.current();
        const maps = new NameMaps();
        await runSliced(maps.build(s), new Slicer(5));
        if (this.maps.at === undefined && this.current() === s) this.maps.adopt(maps);
      }
    };
    run().catch((err: unknown) => { this.log.error({ err }, 'dns IXFR journal: name maps not built'); }).finally(() => { this.rebuilding = false; });
  }

  private write(revision: string, from: number, to: number, diffs: ZoneDiff[] | undefined): void {
    const seq = Number(this.insertStep.run(from, to, revision, diffs ? 1 : 0).lastInsertRowid);
    for (const d of diffs ?? []) this.insertDiff.run(seq, d.zone, d.whole ? 1 : 0, encode(d.deleted), encode(d.added));
    this.trim();
  }

  /**
   * The condensed difference of `zone` from serial `from` to serial `to` (RFC 1995 §5: one
   * difference for all the steps between), with only `tenant`'s records when given; undefined when
   * the journal does not reach back to `from` in an unbroken chain of recorded steps ending at `to`,
   * or a step created or removed the zone: the caller sends the whole zone then.
   */
  changes(zone: string, from: number, to: number, tenant?: string): Condensed | undefined {
    const steps = this.steps.all() as StepRow[];
    let i = -1;
    for (let k = steps.length - 1; k >= 0; k--) if (steps[k]!.from_serial === from) { i = k; break; }
    if (i < 0) return undefined;
    let j = i;
    for (; ; j++) {
      const st = steps[j];
      if (!st || st.complete !== 1 || (j > i && st.from_serial !== steps[j - 1]!.to_serial)) return undefined;
      if (st.to_serial === to) break;
    }
    const deleted = new Map<string, JournalRecord>();
    const added = new Map<string, JournalRecord>();
    for (const row of this.diffs.all(zone, steps[i]!.seq, steps[j]!.seq) as { whole: number; deleted: string; added: string }[]) {
      if (row.whole) return undefined;
      for (const r of decode(row.deleted)) {
        if (tenant !== undefined && r.tenant !== tenant) continue;
        const k = recordKey(r);
        if (added.has(k)) added.delete(k); else deleted.set(k, r);
      }
      for (const r of decode(row.added)) {
        if (tenant !== undefined && r.tenant !== tenant) continue;
        const k = recordKey(r);
        if (deleted.has(k)) deleted.delete(k); else added.set(k, r);
      }
    }
    return { deleted: [...deleted.values()], added: [...added.values()] };
  }
}
