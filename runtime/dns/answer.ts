import type { Config } from '../config/types.js';
import type { Snapshot } from '../../core/snapshot/snapshot.js';
import { SelectScratch, needsGeo, readsClient, selectCandidates } from '../balancer/select.js';
import type { Candidate, RumSource, Rng, SelectContext, StepTrace } from '../balancer/types.js';
import { asnOfIp, locateIp } from '../geo/lookup.js';
import { typesAt, type DnssecResponder } from './dnssec-answer.js';
import { DNSSEC_TYPE } from './dnssec-wire.js';
import { refreshHealth, type AnswerHealth, type GeoDeps, type ServicePlan } from './service-plan.js';
import { signResponse, tsigErrorRecord, tsigRecordSize, verifyRequest, type FailedRequest, type TsigKeyring, type VerifiedRequest } from './tsig.js';
import { DecodeStatus, ParsedQuery, decodeQuery, ecsAddressText } from './wire-query.js';
import { RCODE, ReplyWriter, TYPE } from './wire-reply.js';
import { NameMatch, buildZoneIndex, lookupName, zoneIndexSteps, type NameIndex, type OnUnserved, type Zone, type ZoneIndex } from './zone-index.js';

/** What the answer path reads. */
export interface AnswerDeps {
  config: Config;
  health: AnswerHealth;
  snapshot: () => Snapshot;
  geo: GeoDeps;
  rum: RumSource;
  rand: Rng;
  /** the SOA serial of the committed state (zone-serial.ts) */
  serial: () => number;
  /** TSIG keys (`dns.axfr.tsigKeys`): a signed query is verified and its reply signed */
  tsigKeys?: TsigKeyring;
  /** wall clock in ms, for TSIG times (default Date.now) */
  now?: () => number;
  /**
   * RFC 2136 UPDATE (opcode 5), when `dns.update.enabled`: carries out a verified message and
   * resolves the rcode (never rejects); `signed` names the TSIG key that signed it, with its time,
   * fudge and MAC (for the replay check), undefined when unsigned. `req` is the handler's own copy.
   * The reply waits for it, the answer path does not. Unset: NOTIMP.
   */
  update?: (req: Buffer, signed: UpdateSigner | undefined) => Promise<number>;
  /** told once about each service row the zone index leaves out (logged at build, never per query) */
  onUnserved?: OnUnserved;
  /**
   * TXT RDATA of the served revision's provenance, built at apply time: the answer to a CHAOS TXT
   * query for `dns.versionName` (docs/dns.md "Provenance over CHAOS"); absent: REFUSED like every
   * other CHAOS query
   */
  versionTxt?: () => Buffer;
  /** DNSSEC online signing (`dns.dnssec`): every served zone answers DNSKEY, and replies to DO queries are signed */
  dnssec?: DnssecResponder;
  /**
   * The query counter that drives round-robin rotation, one Uint32 cell shared by every answering
   * thread (docs/dns.md "Workers"), so consecutive queries rotate as one sequence whichever
   * thread answers them. Absent: a counter of this answerer's own.
   */
  sequence?: Uint32Array;
  /**
   * A DNS worker's view of the main thread's index image (index-view.ts): names are looked up
   * there, and no zone index is built from `snapshot`. Absent: the main thread's own ZoneIndex.
   */
  names?: NameIndex;
}

/** CHAOS class (RFC 1035 §3.2.4). */
const CLASS_CH = 3;

/** Who signed an UPDATE (AnswerDeps.update): the key name, Time Signed, Fudge and MAC of its TSIG. */
export interface UpdateSigner { key: string; timeSigned: number; fudge: number; mac: Buffer }

/**
 * An answer that is not ready yet. Without `finish`: it needs a database that is still loading;
 * retry with `mayWait` false after `wait` or the deadline. With `finish` (an RFC 2136 UPDATE): once
 * `wait` settles, however long it takes, `finish()` returns the reply (the answerer's `last*`
 * facts describe it until the next call).
 */
export interface PendingAnswer { wait: Promise<void>; finish?: () => Buffer | null }

const NO_ANSWERS: readonly Candidate[] = [];
const NO_KEYS: TsigKeyring = new Map();

/**
 * Turns one request packet into one reply (gslb-api.md §2, DESIGN decision 9): decode, classify
 * the name against the precomputed zone index, run the service's selection, encode. Synchronous
 * and allocation-light; the only await-worthy case — a geo database configured but not loaded
 * yet — is returned as a `PendingAnswer` so the server can apply the lookup deadline. Facts about
 * the last reply (`lastRcode`, `lastAnswers`…) are kept for the query log and metrics.
 */
export class Answerer {
  private ix: ZoneIndex | undefined;
  private readonly q = new ParsedQuery();
  private readonly w = new ReplyWriter();
  private readonly match = new NameMatch();
  private readonly ctx: SelectContext;
  /** what selections reuse, so one allocates nothing (`lastAnswers` may be its list) */
  private readonly scratch = new SelectScratch();
  private readonly payloadSize: number;
  private readonly keys: TsigKeyring;
  private readonly now: () => number;
  /** the verified TSIG of the query being answered; its reply is signed */
  private signer: VerifiedRequest | undefined;
  /** lower-case, fully qualified `dns.versionName`; '' when switched off */
  private readonly versionName: string;
  private readonly seq: Uint32Array;
  private readonly names: NameIndex | undefined;
  /** the record type `select` answered with (A or AAAA) */
  private answerType = 0;
  /** response code of the last reply; -1 when the packet was dropped */
  lastRcode = 0;
  lastQtype = 0;
  lastName = '';
  /** the answered candidates in order; valid until the next query (the array is reused) */
  lastAnswers: readonly Candidate[] = NO_ANSWERS;

  constructor(private readonly deps: AnswerDeps) {
    this.payloadSize = deps.config.dns.udpPayloadSize;
    this.keys = deps.tsigKeys ?? NO_KEYS;
    this.now = deps.now ?? Date.now;
    this.seq = deps.sequence ?? new Uint32Array(1);
    this.names = deps.names;
    const v = deps.versionTxt ? deps.config.dns.versionName.toLowerCase() : '';
    this.versionName = v === '' || v.endsWith('.') ? v : `${v}.`;
    const geo = deps.geo;
    this.ctx = {
      client: '', seq: 0, rand: deps.rand, rum: deps.rum, trace: undefined,
      locate: (ip) => locateIp(geo.city, ip),
      asnOf: (ip) => asnOfIp(geo.asn, ip),
    };
  }

  /**
   * The EDNS Client Subnet of the last query as `address/prefix` (`81.2.69.0/24`), or undefined
   * when it had none. Allocates: for the query log only, never the answer path.
   */
  lastEcs(): string | undefined {
    return this.q.hasEcs ? `${ecsAddressText(this.q.ecs)}/${this.q.ecs.sourcePrefix}` : undefined;
  }

  /**
   * While true, `index()` keeps serving the current index when the snapshot has moved on: a newer
   * one is being built in slices and is installed with `adoptIndex` (docs/dns.md "Large states"),
   * so answers stay on the previous revision for the length of that build.
   */
  holdIndex = false;

  /** True when the current index is the one of the served snapshot, geo databases and serial. */
  indexCurrent(): boolean {
    return this.ix !== undefined && this.ix.snapshot === this.deps.snapshot() && this.ix.geoGeneration === this.geoGeneration() && this.ix.serial === this.deps.serial();
  }

  /** Which loads of the geo databases an index was built against (it is rebuilt after a reload). */
  private geoGeneration(): number {
    const g = this.deps.geo;
    return (g.city?.generation ?? 0) + (g.asn?.generation ?? 0);
  }

  /**
   * The zone index of the current snapshot, rebuilt when the snapshot or a geo database changed
   * (unless `holdIndex`). The dns part calls this right after each swap, so queries find it built.
   */
  index(): ZoneIndex {
    if (this.ix && (this.holdIndex || this.indexCurrent())) return this.ix;
    this.ix = buildZoneIndex(this.deps.snapshot(), this.deps.config, this.deps.geo, this.geoGeneration(), this.deps.serial(), this.ix, this.deps.onUnserved);
    return this.ix;
  }

  /**
   * The zone index of a snapshot about to be swapped in, with the SOA serial it will be served
   * with, as steps (zone-index.ts `zoneIndexSteps`): a large apply builds it between turns of the
   * event loop and installs it with `adoptIndex` at the swap. Reuses the current index's plans.
   */
  indexSteps(s: Snapshot, serial: number): Generator<void, ZoneIndex, void> {
    return zoneIndexSteps(s, this.deps.config, this.deps.geo, this.geoGeneration(), serial, this.ix, this.deps.onUnserved);
  }

  /**
   * Makes a prepared index the current one; `index()` keeps it while it matches the snapshot,
   * geo databases and serial being served (else it builds afresh, as always).
   */
  adoptIndex(ix: ZoneIndex): void {
    this.ix = ix;
  }

  /** Restarts the round-robin query counter, so a query's answer does not depend on the ones before (routing tests). */
  resetSequence(): void {
    Atomics.store(this.seq, 0, 0);
  }

  /**
   * Answers `req` from `src`. Returns the reply (with the TCP length prefix when `udp` is false),
   * null when the packet is dropped, or a PendingAnswer when `mayWait` and a database is loading.
   * With `trace`, each selection step is recorded (POST /simulate).
   */
  handle(req: Buffer, src: string, udp: boolean, mayWait: boolean, trace?: StepTrace[]): Buffer | PendingAnswer | null {
    this.w.writeToScratch();
    const r = this.answer(req, src, udp, mayWait, trace);
    return r === true ? this.w.copyOut(!udp) : r;
  }

  /**
   * `handle` for UDP that writes the reply straight into `out[at, at + max)` (a batched send slot)
   * and returns its length, saving the copy `handle` allocates. A reply longer than `max` is
   * returned as a Buffer instead; null and PendingAnswer mean what they mean for `handle` (the
   * slot may hold a partial reply then: the caller sends nothing from it).
   */
  handleInto(req: Buffer, src: string, mayWait: boolean, out: Buffer, at: number, max: number): number | Buffer | PendingAnswer | null {
    const w = this.w;
    w.writeTo(out, at, max);
    const r = this.answer(req, src, true, mayWait, undefined);
    if (r !== true) return r;
    if (w.inPlace) return w.length;
    // It grew past the slot while it was built (truncation may have shortened it since).
    const n = w.copyInto(out, at, max);
    return n >= 0 ? n : w.copyOut(false);
  }

  /**
   * Builds the reply in the writer's current buffer (its scratch buffer, or the send slot it was
   * pointed at: true), or drops (null) or defers. A signed
   * query (RFC 8945) is verified first: one that fails gets a NOTAUTH reply with the TSIG error
   * (BADKEY for a key this server does not have, §5.2.1) or FORMERR; one that verifies is
   * answered as usual and its reply signed. Unsigned queries never reach the TSIG code.
   */
  private answer(req: Buffer, src: string, udp: boolean, mayWait: boolean, trace: StepTrace[] | undefined): true | PendingAnswer | null {
    const q = this.q;
    const st = decodeQuery(req, q);
    this.lastQtype = q.qtype;
    this.lastName = q.name;
    this.lastAnswers = NO_ANSWERS;
    this.signer = undefined;
    if (st === DecodeStatus.Drop) { this.lastRcode = -1; return null; }
    let limit = udp ? (q.edns ? Math.min(q.udpSize, this.payloadSize) : 512) : 0;
    if (q.tsigAt >= 0) {
      const v = verifyRequest(req, q.tsigAt, this.keys, Math.floor(this.now() / 1000));
      if (!v.ok) return v.rcode === RCODE.FORMERR ? this.reply(req, RCODE.FORMERR, false, limit, 0) : this.tsigError(req, v);
      this.signer = v;
      if (limit > 0) limit -= tsigRecordSize(v.key);
    }
    const r = this.answerQuery(req, src, st, limit, mayWait, trace);
    if (r === true && this.signer) this.w.appendAdditional(signResponse(this.w.sealed(), this.signer, Math.floor(this.now() / 1000)));
    return r;
  }

  /** The NOTAUTH reply to a query whose TSIG failed: the TSIG error record, signed only when the MAC verified (RFC 8945 §5.3.2). */
  private tsigError(req: Buffer, v: Extract<FailedRequest, { rcode: 9 }>): true {
    // Header, question, OPT and one TSIG RR: small enough for any UDP limit, so never truncated.
    this.reply(req, RCODE.NOTAUTH, false, 0, 0);
    this.w.appendAdditional(tsigErrorRecord(this.w.sealed(), v, Math.floor(this.now() / 1000)));
    return true;
  }

  private answerQuery(req: Buffer, src: string, st: DecodeStatus, limit: number, mayWait: boolean, trace: StepTrace[] | undefined): true | PendingAnswer {
    const q = this.q;
    const w = this.w;
    if (st === DecodeStatus.NotImp && q.opcode === 5 && this.deps.update) return this.deferUpdate(this.deps.update, req, limit);
    if (st !== DecodeStatus.Ok) return this.reply(req, st, false, limit, 0);
    if (q.qclass !== 1 || q.qtype === TYPE.AXFR || q.qtype === TYPE.IXFR) {
      if (q.qclass === CLASS_CH && (q.qtype === TYPE.TXT || q.qtype === TYPE.ANY) && q.name === this.versionName && this.versionName !== '') return this.version(req, limit);
      return this.reply(req, RCODE.REFUSED, false, limit, 0);
    }
    const m = lookupName(this.names ?? this.index(), q.name, this.match);
    if (m.kind === 'refused') return this.reply(req, RCODE.REFUSED, false, limit, 0);
    const zone = m.zone!;
    w.begin(req, q, RCODE.NOERROR, true);
    let scope = 0;
    const qt = q.qtype;
    const atApex = q.name === zone.name;
    // Signed only when asked (DO, RFC 4035 §3.2.1): other replies are the same bytes as unsigned.
    const sig = q.dnssecOk ? this.deps.dnssec : undefined;
    sig?.begin(req, q);
    if (qt === TYPE.TXT && m.txt) {
      for (const r of m.txt.rdata) w.addAnswer(TYPE.TXT, m.txt.ttl, r);
      sig?.signAnswer(w, zone, TYPE.TXT, m.txt.ttl, m.txt.rdata);
    } else if (atApex && (qt === TYPE.SOA || qt === TYPE.NS || qt === TYPE.ANY)) {
      // ANY at the apex: the SOA and the NS set, a minimal answer RFC 8482 §4.2 permits.
      if (qt !== TYPE.NS) { w.addAnswer(TYPE.SOA, 3600, zone.soa); sig?.signAnswer(w, zone, TYPE.SOA, 3600, [zone.soa]); }
      if (qt !== TYPE.SOA) { for (const ns of zone.ns) w.addAnswer(TYPE.NS, 3600, ns); sig?.signAnswer(w, zone, TYPE.NS, 3600, zone.ns); }
    } else if (atApex && qt === DNSSEC_TYPE.DNSKEY && this.deps.dnssec) {
      this.deps.dnssec.addDnskeys(w, zone, sig !== undefined);
    } else if (m.kind === 'nxdomain') {
      // Signed: a compact answer (RFC 9824), NOERROR with an NSEC that says the name has nothing.
      if (!sig) w.setRcode(RCODE.NXDOMAIN);
      this.addNegative(zone, sig, m, atApex);
    } else if (m.plan && (qt === TYPE.A || qt === TYPE.AAAA || qt === TYPE.ANY)) {
      const r = this.select(m.plan, src, mayWait, trace);
      if (r === 'wait') return { wait: this.waitFor(m.plan) };
      scope = r;
      if (w.code === RCODE.NOERROR && w.answers === 0) this.addNegative(zone, sig, m, atApex);
      else if (sig && w.answers > 0) sig.signAnswer(w, zone, this.answerType, m.plan.ttl, this.lastAnswers.map((c) => c.rdata));
    } else {
      this.addNegative(zone, sig, m, atApex); // NODATA (RFC 2308 §2.2)
    }
    this.lastRcode = w.code;
    w.seal(q, limit, this.payloadSize, scope);
    return true;
  }

  /**
   * An UPDATE is carried out off the answer path (the replay check may ask the cluster): the
   * request and its MAC are copied (a batched receive slot is reused), and the reply, signed when
   * the request was, is built when the handler settles, from the copy.
   */
  private deferUpdate(update: NonNullable<AnswerDeps['update']>, req: Buffer, limit: number): PendingAnswer {
    const own = Buffer.from(req);
    const v = this.signer;
    const signer: VerifiedRequest | undefined = v && { ...v, tsig: { ...v.tsig, mac: Buffer.from(v.tsig.mac), other: Buffer.from(v.tsig.other) } };
    let rcode: number = RCODE.SERVFAIL;
    const wait = update(own, signer && { key: signer.key.name, timeSigned: signer.tsig.timeSigned, fudge: signer.tsig.fudge, mac: signer.tsig.mac })
      .then((c) => { rcode = c; }, () => {});
    const finish = () => {
      const q = this.q;
      this.w.writeToScratch();
      decodeQuery(own, q);
      this.lastQtype = q.qtype;
      this.lastName = q.name;
      this.lastAnswers = NO_ANSWERS;
      this.reply(own, rcode, false, limit, 0);
      if (signer) this.w.appendAdditional(signResponse(this.w.sealed(), signer, Math.floor(this.now() / 1000)));
      return this.w.copyOut(limit === 0); // limit 0: TCP, whose replies carry the length prefix
    };
    return { wait, finish };
  }

  private reply(req: Buffer, rcode: number, aa: boolean, limit: number, scope: number): true {
    this.w.begin(req, this.q, rcode, aa);
    this.lastRcode = rcode;
    this.w.seal(this.q, limit, this.payloadSize, scope);
    return true;
  }

  /** The provenance TXT record, class CHAOS, TTL 0 (it changes with every apply). */
  private version(req: Buffer, limit: number): true {
    const w = this.w;
    w.begin(req, this.q, RCODE.NOERROR, true);
    w.addAnswerOfClass(TYPE.TXT, CLASS_CH, 0, this.deps.versionTxt!());
    this.lastRcode = RCODE.NOERROR;
    w.seal(this.q, limit, this.payloadSize, 0);
    return true;
  }

  /** The authority section of a negative answer: the SOA (RFC 2308 §3) and, when signed, its denial of existence. */
  private addNegative(zone: Zone, sig: DnssecResponder | undefined, m: NameMatch, atApex: boolean): void {
    const at = this.w.nameOffset(this.q.labels - zone.labels);
    this.w.addAuthority(at, TYPE.SOA, zone.negativeTtl, zone.soa);
    if (sig) sig.addDenial(this.w, zone, at, this.q.qtype, typesAt(m, atApex));
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
  private select(plan: ServicePlan, src: string, mayWait: boolean, trace: StepTrace[] | undefined): number | 'wait' {
    const q = this.q;
    const w = this.w;
    // A configured database that has not loaded yet is the one lookup the answer may wait for
    // (dns.lookupDeadline, gslb-api.md §7); past the deadline the reply is SERVFAIL.
    if (this.pendingDb(plan)) {
      if (mayWait) return 'wait';
      w.setRcode(RCODE.SERVFAIL);
      trace?.push({ step: 'lookup', input: [], output: [], reason: 'DatabaseNotLoadedDeadline' });
      return 0;
    }
    refreshHealth(plan, this.deps.health);
    let fam = plan.v4;
    let type: number = TYPE.A;
    if (q.qtype === TYPE.AAAA || (q.qtype === TYPE.ANY && plan.v4.enabled.length === 0)) { fam = plan.v6; type = TYPE.AAAA; }
    const ctx = this.ctx;
    const ecs = q.hasEcs && q.ecs.sourcePrefix > 0;
    // Only selections that read the client get its text (building it from ECS allocates).
    ctx.client = !readsClient(plan) ? '' : ecs ? ecsAddressText(q.ecs) : src.startsWith('::ffff:') && src.includes('.') ? src.slice(7) : src;
    ctx.seq = Atomics.add(this.seq, 0, 1);
    ctx.trace = trace;
    const sel = selectCandidates(plan, fam.enabled, fam.healthy, ctx, this.scratch);
    ctx.trace = undefined;
    if (sel.outcome === 'servfail') { w.setRcode(RCODE.SERVFAIL); return 0; }
    for (const c of sel.list) w.addAnswer(type, plan.ttl, c.rdata);
    this.lastAnswers = sel.list;
    this.answerType = type;
    return ecs && sel.clientScoped ? q.ecs.sourcePrefix : 0;
  }
}
