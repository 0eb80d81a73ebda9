import type { DnssecResponder } from './dnssec-answer.js';
import { PASS, QUERY_KIND, type DnsStep, type QueryScope, type StepResult } from './step.js';
import { RCODE } from './wire-reply.js';
import { lookupName, type NameIndex } from './zone-index.js';

/**
 * Finds the served zone of the name (zone-index.ts `lookupName`): a name in no served zone is
 * REFUSED; otherwise the step fills the scope's `match`, `zone` and `atApex`, begins a NOERROR
 * authoritative reply, with its DNSSEC signing when asked (DO, RFC 4035 §3.2.1: other replies
 * are the same bytes as unsigned), and passes to the zone's answering steps.
 */
export class ZoneStep implements DnsStep {
  readonly name = 'zone';
  readonly kinds = QUERY_KIND.Lookup;

  /** `names`: the index lookups read now (the main thread's zone index, or a worker's image view) */
  constructor(private readonly names: () => NameIndex, private readonly dnssec: DnssecResponder | undefined) {}

  answer(x: QueryScope): StepResult {
    const q = x.q;
    const m = lookupName(this.names(), q.name, x.match);
    if (m.kind === 'refused') return x.reply(RCODE.REFUSED);
    const zone = m.zone!;
    x.zone = zone;
    x.atApex = q.name === zone.name;
    x.w.begin(x.req, q, RCODE.NOERROR, true);
    const sig = q.dnssecOk ? this.dnssec : undefined;
    x.sig = sig;
    sig?.begin(x.req, q);
    return PASS;
  }
}
