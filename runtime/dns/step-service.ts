import { SelectScratch, needsGeo, readsClient, selectCandidates } from '../balancer/select.js';
import type { RumSource, Rng, SelectContext, StepTrace } from '../balancer/types.js';
import { asnOfIp, locateIp } from '../geo/lookup.js';
import { typesAt, type DnssecResponder } from './dnssec-answer.js';
import { refreshHealth, type AnswerHealth, type GeoDeps, type ServicePlan } from './service-plan.js';
import { QUERY_KIND, type DnsStep, type QueryScope, type StepResult } from './step.js';
import { ecsAddressText } from './wire-query.js';
import { RCODE, TYPE } from './wire-reply.js';
import type { NameMatch, Zone } from './zone-index.js';

/** What the service step reads. */
export interface ServiceStepDeps {
  health: AnswerHealth;
  geo: GeoDeps;
  rum: RumSource;
  rand: Rng;
  /** the round-robin query counter (AnswerDeps.sequence) */
  sequence: Uint32Array;
}

/**
 * The answer of a name in a served zone (the last step: it always answers): its TXT records, the
 * apex SOA and NS, NXDOMAIN, a service's selection (gslb-api.md §2) for A, AAAA and ANY, or NODATA,
 * signed when the zone step began a signed reply. The one answer that may wait — a geo database
 * configured but not loaded yet — is a PendingAnswer the server applies the lookup deadline to.
 */
export class ServiceStep implements DnsStep {
  readonly name = 'service';
  readonly kinds = QUERY_KIND.Lookup;
  private readonly ctx: SelectContext;
  /** what selections reuse, so one allocates nothing (`lastAnswers` may be its list) */
  private readonly scratch = new SelectScratch();

  constructor(private readonly deps: ServiceStepDeps) {
    const geo = deps.geo;
    this.ctx = {
      client: '', seq: 0, rand: deps.rand, rum: deps.rum, trace: undefined,
      locate: (ip) => locateIp(geo.city, ip),
      asnOf: (ip) => asnOfIp(geo.asn, ip),
    };
  }

  answer(x: QueryScope): StepResult {
    const q = x.q;
    const w = x.w;
    const m = x.match;
    const zone = x.zone!;
    const sig = x.sig;
    const qt = q.qtype;
    const atApex = x.atApex;
    let scope = 0;
    if (qt === TYPE.TXT && m.txt) {
      for (const r of m.txt.rdata) w.addAnswer(TYPE.TXT, m.txt.ttl, r);
      sig?.signAnswer(w, zone, TYPE.TXT, m.txt.ttl, m.txt.rdata);
    } else if (atApex && (qt === TYPE.SOA || qt === TYPE.NS || qt === TYPE.ANY)) {
      // ANY at the apex: the SOA and the NS set, a minimal answer RFC 8482 §4.2 permits.
      if (qt !== TYPE.NS) { w.addAnswer(TYPE.SOA, 3600, zone.soa); sig?.signAnswer(w, zone, TYPE.SOA, 3600, [zone.soa]); }
      if (qt !== TYPE.SOA) { for (const ns of zone.ns) w.addAnswer(TYPE.NS, 3600, ns); sig?.signAnswer(w, zone, TYPE.NS, 3600, zone.ns); }
    } else if (m.kind === 'nxdomain') {
      // Signed: a compact answer (RFC 9824), NOERROR with an NSEC that says the name has nothing.
      if (!sig) w.setRcode(RCODE.NXDOMAIN);
      this.addNegative(x, zone, sig, m, atApex);
    } else if (m.plan && (qt === TYPE.A || qt === TYPE.AAAA || qt === TYPE.ANY)) {
      const r = this.select(x, m.plan);
      if (r === 'wait') return { wait: this.waitFor(m.plan) };
      scope = r;
      if (w.code === RCODE.NOERROR && w.answers === 0) this.addNegative(x, zone, sig, m, atApex);
      else if (sig && w.answers > 0) sig.signAnswer(w, zone, x.answerType, m.plan.ttl, x.lastAnswers.map((c) => c.rdata));
    } else {
      this.addNegative(x, zone, sig, m, atApex); // NODATA (RFC 2308 §2.2)
    }
    return x.seal(scope);
  }

  /** The authority section of a negative answer: the SOA (RFC 2308 §3) and, when signed, its denial of existence. */
  private addNegative(x: QueryScope, zone: Zone, sig: DnssecResponder | undefined, m: NameMatch, atApex: boolean): void {
    const at = x.w.nameOffset(x.q.labels - zone.labels);
    x.w.addAuthority(at, TYPE.SOA, zone.negativeTtl, zone.soa);
    if (sig) sig.addDenial(x.w, zone, at, x.q.qtype, typesAt(m, atApex));
  }

  private pendingDb(plan: ServicePlan) {
    const g = this.deps.geo;
    if (g.city && !g.city.reader && needsGeo(plan)) return g.city;
    if (g.asn && !g.asn.reader && plan.algorithm === 'asn') return g.asn;
    return undefined;
  }

  private waitFor(plan: ServicePlan): Promise<void> {
    return this.pendingDb(plan)?.ready() ?? Promise.resolve();
  }

  /** Runs the selection and writes answers; returns the ECS scope, or 'wait'. */
  private select(x: QueryScope, plan: ServicePlan): number | 'wait' {
    const q = x.q;
    const w = x.w;
    const trace: StepTrace[] | undefined = x.trace;
    // A configured database that has not loaded yet is the one lookup the answer may wait for
    // (dns.lookupDeadline, gslb-api.md §7); past the deadline the reply is SERVFAIL.
    if (this.pendingDb(plan)) {
      if (x.mayWait) return 'wait';
      w.setRcode(RCODE.SERVFAIL);
      trace?.push({ step: 'lookup', input: [], output: [], reason: 'DatabaseNotLoadedDeadline' });
      return 0;
    }
    refreshHealth(plan, this.deps.health);
    let fam = plan.v4;
    let type: number = TYPE.A;
    if (q.qtype === TYPE.AAAA || (q.qtype === TYPE.ANY && plan.v4.enabled.length === 0)) { fam = plan.v6; type = TYPE.AAAA; }
    const ctx = this.ctx;
    const src = x.src;
    const ecs = q.hasEcs && q.ecs.sourcePrefix > 0;
    // Only selections that read the client get its text (building it from ECS allocates).
    ctx.client = !readsClient(plan) ? '' : ecs ? ecsAddressText(q.ecs) : src.startsWith('::ffff:') && src.includes('.') ? src.slice(7) : src;
    ctx.seq = Atomics.add(this.deps.sequence, 0, 1);
    ctx.trace = trace;
    const sel = selectCandidates(plan, fam.enabled, fam.healthy, ctx, this.scratch);
    ctx.trace = undefined;
    if (sel.outcome === 'servfail') { w.setRcode(RCODE.SERVFAIL); return 0; }
    for (const c of sel.list) w.addAnswer(type, plan.ttl, c.rdata);
    x.lastAnswers = sel.list;
    x.answerType = type;
    return ecs && sel.clientScoped ? q.ecs.sourcePrefix : 0;
  }
}
