import type { Config } from '../config/types.js';
import type { Snapshot } from '../../core/snapshot/snapshot.js';
import type { Candidate, RumSource, Rng, StepTrace } from '../balancer/types.js';
import { answerChain } from './answer-chain.js';
import { IxfrUdpStep } from './step-ixfr-udp.js';
import type { DnssecResponder } from './dnssec-answer.js';
import type { AnswerHealth, GeoDeps } from './service-plan.js';
import { QueryScope, type DnsStep, type PendingAnswer, type StreamReply } from './step.js';
import { signResponse, tsigErrorRecord, tsigRecordSize, verifyRequest, type FailedRequest, type TsigKeyring } from './tsig.js';
import { DecodeStatus, decodeQuery, ecsAddressText } from './wire-query.js';
import { RCODE } from './wire-reply.js';
import { buildZoneIndex, zoneIndexSteps, type NameIndex, type OnUnserved, type ZoneIndex } from './zone-index.js';

export type { PendingAnswer, UpdateSigner } from './step.js';

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
   * Steps other features add to the answer chain (answer-chain.ts), asked first, in order: the TXT
   * feature's RFC 2136 UPDATE when `dns.update.enabled` (without it, an UPDATE is NOTIMP).
   */
  steps?: readonly DnsStep[];
  /** the zone-transfer step (step-transfer.ts), when `dns.axfr.enabled` */
  transfer?: DnsStep;
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

const NO_KEYS: TsigKeyring = new Map();

/**
 * Turns one request packet into one reply (gslb-api.md §2, DESIGN decision 9): decode, verify a
 * TSIG, then ask the steps of the answer chain (answer-chain.ts, docs/dns.md "The answer chain")
 * in order until one answers. Synchronous and allocation-light; the only await-worthy cases — a
 * geo database configured but not loaded yet, an UPDATE, a zone transfer — are returned as a
 * `PendingAnswer` so the server can apply the lookup deadline or wait. Facts about the last reply
 * (`lastRcode`, `lastAnswers`…) are kept for the query log and metrics.
 */
export class Answerer {
  private ix: ZoneIndex | undefined;
  /** the query being answered, and the writer of its reply: one, refilled per query */
  private readonly x: QueryScope;
  /** the answer chain: built once, asked in order */
  readonly steps: readonly DnsStep[];
  private readonly payloadSize: number;
  private readonly keys: TsigKeyring;
  private readonly now: () => number;
  private readonly seq: Uint32Array;

  constructor(private readonly deps: AnswerDeps) {
    this.payloadSize = deps.config.dns.udpPayloadSize;
    this.keys = deps.tsigKeys ?? NO_KEYS;
    this.now = deps.now ?? Date.now;
    this.seq = deps.sequence ?? new Uint32Array(1);
    this.x = new QueryScope(this.payloadSize, this.now);
    const names = deps.names;
    const versionName = deps.config.dns.versionName;
    this.steps = answerChain({
      features: deps.steps ?? [],
      transfer: deps.transfer,
      udpIxfr: deps.config.dns.axfr.enabled ? new IxfrUdpStep(deps.config.dns, names ? () => names : () => this.index()) : undefined,
      version: deps.versionTxt && versionName !== '' ? { name: versionName, txt: deps.versionTxt } : undefined,
      dnssec: deps.dnssec,
      names: names ? () => names : () => this.index(),
      health: deps.health, geo: deps.geo, rum: deps.rum, rand: deps.rand, sequence: this.seq,
    });
  }

  /** response code of the last reply; -1 when the packet was dropped */
  get lastRcode(): number { return this.x.lastRcode; }
  get lastQtype(): number { return this.x.q.qtype; }
  get lastName(): string { return this.x.q.name; }
  /** the answered candidates in order; valid until the next query (the array is reused) */
  get lastAnswers(): readonly Candidate[] { return this.x.lastAnswers; }

  /**
   * The EDNS Client Subnet of the last query as `address/prefix` (`81.2.69.0/24`), or undefined
   * when it had none. Allocates: for the query log only, never the answer path.
   */
  lastEcs(): string | undefined {
    const q = this.x.q;
    return q.hasEcs ? `${ecsAddressText(q.ecs)}/${q.ecs.sourcePrefix}` : undefined;
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
   * null when the packet is dropped, or a PendingAnswer when `mayWait` and a database is loading
   * (or an UPDATE, or a zone transfer over `stream`, the TCP connection it came on).
   * With `trace`, each selection step is recorded (POST /simulate).
   */
  handle(req: Buffer, src: string, udp: boolean, mayWait: boolean, trace?: StepTrace[], stream?: StreamReply): Buffer | PendingAnswer | null {
    const w = this.x.w;
    w.writeToScratch();
    const r = this.answer(req, src, udp, mayWait, trace, stream);
    return r === true ? w.copyOut(!udp) : r;
  }

  /**
   * `handle` for UDP that writes the reply straight into `out[at, at + max)` (a batched send slot)
   * and returns its length, saving the copy `handle` allocates. A reply longer than `max` is
   * returned as a Buffer instead; null and PendingAnswer mean what they mean for `handle` (the
   * slot may hold a partial reply then: the caller sends nothing from it).
   */
  handleInto(req: Buffer, src: string, mayWait: boolean, out: Buffer, at: number, max: number): number | Buffer | PendingAnswer | null {
    const w = this.x.w;
    w.writeTo(out, at, max);
    const r = this.answer(req, src, true, mayWait, undefined, undefined);
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
   * answered as usual and its reply signed. Unsigned queries never reach the TSIG code. Then the
   * steps of the chain are asked in order (a fixed array: nothing is allocated to walk it).
   */
  private answer(req: Buffer, src: string, udp: boolean, mayWait: boolean, trace: StepTrace[] | undefined, stream: StreamReply | undefined): true | PendingAnswer | null {
    const x = this.x;
    const q = x.q;
    x.start(req, src, udp, mayWait, trace, stream);
    const st = decodeQuery(req, q);
    x.status = st;
    if (st === DecodeStatus.Drop) { x.lastRcode = -1; return null; }
    let limit = udp ? (q.edns ? Math.min(q.udpSize, this.payloadSize) : 512) : 0;
    x.limit = limit;
    if (q.tsigAt >= 0) {
      const v = verifyRequest(req, q.tsigAt, this.keys, Math.floor(this.now() / 1000));
      if (!v.ok) return v.rcode === RCODE.FORMERR ? x.reply(RCODE.FORMERR) : this.tsigError(v);
      x.signer = v;
      if (limit > 0) limit -= tsigRecordSize(v.key);
      x.limit = limit;
    }
    const steps = this.steps;
    let r: true | PendingAnswer | undefined;
    for (let i = 0; i < steps.length && r === undefined; i++) r = steps[i]!.answer(x);
    // the service step answers every query that reaches it: this is a chain without one
    if (r === undefined) r = x.reply(RCODE.REFUSED);
    if (r === true && x.signer) x.w.appendAdditional(signResponse(x.w.sealed(), x.signer, Math.floor(this.now() / 1000)));
    return r;
  }

  /** The NOTAUTH reply to a query whose TSIG failed: the TSIG error record, signed only when the MAC verified (RFC 8945 §5.3.2). */
  private tsigError(v: Extract<FailedRequest, { rcode: 9 }>): true {
    // Header, question, OPT and one TSIG RR: small enough for any UDP limit, so never truncated.
    const x = this.x;
    x.limit = 0;
    x.reply(RCODE.NOTAUTH);
    x.w.appendAdditional(tsigErrorRecord(x.w.sealed(), v, Math.floor(this.now() / 1000)));
    return true;
  }
}
