import type { ApplyHook } from '../../core/apply/hooks.js';
import type { Plan } from '../../core/plan/types.js';
import type { Db } from '../store/db.js';
import { DNS_TABLES } from './zone-index.js';

/**
 * RFC 1982 §3.1 serial addition of 1 in the 32-bit space, skipping 0 on wrap as BIND's
 * `serial-update-method increment` does (some secondaries treat 0 as "no serial").
 */
export function nextSerial(s: number): number {
  const n = (s + 1) >>> 0;
  return n === 0 ? 1 : n;
}

/** RFC 1982 §3.2: true when serial `a` is greater than serial `b` (both 32-bit). */
export function serialGreater(a: number, b: number): boolean {
  const d = ((a >>> 0) - (b >>> 0) + 2 ** 32) % 2 ** 32;
  return d !== 0 && d < 2 ** 31;
}

/** True when a plan changes a row DNS serves from (services, members, geo rules, text records). */
export function changesZone(plan: Plan): boolean {
  return plan.changes.some((c) => (DNS_TABLES as readonly string[]).includes(c.kind));
}

/**
 * The persisted SOA serial (table `dns_zone_serial`, migration 0013). `current` is the serial the
 * zones are served with. The apply hook advances it by one (RFC 1982) inside the transaction of
 * every plan that `changesZone`, so two changes within one second get two serials, a rolled-back
 * apply leaves it where it was, and a restart continues from the stored value. Every node of a
 * cluster applies the same plans in stream order, so nodes that share the plan history (a new
 * node replays it from the start) serve the same serial for the same content.
 */
export class ZoneSerial {
  /** the serial of the committed state; zones built after a swap read it */
  current: number;
  private pending: number | undefined;
  private readonly read: () => number;
  private readonly write: (serial: number, revision: string) => void;

  constructor(db: Db) {
    const get = db.prepare('SELECT serial FROM dns_zone_serial WHERE id = 1');
    const set = db.prepare('INSERT INTO dns_zone_serial (id, serial, revision) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET serial = excluded.serial, revision = excluded.revision');
    this.read = () => ((get.get() as { serial: number } | undefined)?.serial ?? 0) >>> 0;
    this.write = (serial, revision) => { set.run(serial, revision); };
    this.current = this.read() || 1;
  }

  /**
   * Inside the transaction of a plan, after this hook's `inTransaction`: the serial the plan
   * advances to, or undefined when it leaves the serial alone (the IXFR journal reads it).
   */
  get advancing(): number | undefined {
    return this.pending;
  }

  /**
   * The serial the zones will be served with once `plan` is applied (what `hook()` will write):
   * for a large apply that builds the next zone index before its transaction.
   */
  after(plan: Plan): number {
    return changesZone(plan) ? nextSerial(this.read() || this.current) : this.current;
  }

  /**
   * The apply hook: `inTransaction` writes the next serial for a plan that changes the zone (a
   * throw rolls the apply back); `afterSwap`, which runs only once the plan is committed, makes it
   * current, before the `plan_applied` event rebuilds the zones.
   */
  hook(): ApplyHook {
    return {
      inTransaction: (plan) => {
        this.pending = undefined;
        if (!changesZone(plan)) return;
        const next = nextSerial(this.read() || this.current);
        this.write(next, plan.revision);
        this.pending = next;
      },
      afterSwap: () => {
        if (this.pending !== undefined) this.current = this.pending;
        this.pending = undefined;
      },
    };
  }
}
