import type { StepTrace } from '../balancer/types.js';
import type { Candidate } from '../balancer/types.js';
import type { DnssecResponder } from './dnssec-answer.js';
import { signResponse, type VerifiedRequest } from './tsig.js';
import { DecodeStatus, ParsedQuery, decodeQuery } from './wire-query.js';
import { RCODE, ReplyWriter, TYPE } from './wire-reply.js';
import { NameMatch, type Zone } from './zone-index.js';

/**
 * The answer chain (docs/dns.md "The answer chain"): after a query is decoded and its TSIG
 * verified, each step of a fixed, ordered list is asked in turn; the first that answers ends the
 * chain. A step answers by writing the reply into the scope's writer and sealing it (`true`), or
 * by deferring it (`PendingAnswer`); it returns PASS to let the next step decide. Steps are built
 * once, and the chain is a fixed array: a step allocates nothing per query on the hot path.
 */
export interface DnsStep {
  /** what the step answers, for docs and traces (`update`, `chaos`, `service`…) */
  readonly name: string;
  /**
   * The kinds of query the step may answer (QUERY_KIND bits; absent: every kind): the chain skips
   * the step for the others without calling it, so a step that only turns away malformed or
   * non-IN queries costs an ordinary lookup nothing. Must cover every query the step answers.
   */
  readonly kinds?: number;
  answer(x: QueryScope): StepResult;
}

/**
 * What a query is, decided once before the chain is walked: malformed (the decoder's status is not
 * Ok: an UPDATE, another opcode, FORMERR, BADVERS), of a class other than IN, a zone transfer
 * (AXFR or IXFR) — both bits may be set — or an ordinary lookup (class IN, any other type).
 */
export const QUERY_KIND = { Malformed: 1, OtherClass: 2, Transfer: 4, Lookup: 8, All: 15 } as const;

/** The step leaves the query to the next one. */
export const PASS = undefined;

/** `true`: the reply is in the scope's writer, sealed; a PendingAnswer: later; PASS: the next step decides. */
export type StepResult = true | PendingAnswer | typeof PASS;

/**
 * An answer that is not ready yet. Without `finish`: it needs a database that is still loading;
 * retry with `mayWait` false after `wait` or the deadline. With `finish` (an RFC 2136 UPDATE, a
 * zone transfer): once `wait` settles, however long it takes, `finish()` returns the reply (the
 * answerer's `last*` facts describe it until the next call), null to send nothing, or undefined
 * when the step answered by itself (a transfer streamed its messages): nothing is sent, and the
 * query is not counted as one answer.
 */
export interface PendingAnswer { wait: Promise<void>; finish?: () => Buffer | null | undefined }

/** Who signed an UPDATE: the key name, Time Signed, Fudge and MAC of its TSIG. */
export interface UpdateSigner { key: string; timeSigned: number; fudge: number; mac: Buffer }

/**
 * The reply side of a TCP connection, for a step that streams several messages (a zone
 * transfer); `send` takes a message with its TCP length prefix.
 */
export interface StreamReply {
  send(framed: Buffer): void;
  /** true once the backlog is small, false when the connection is gone or stalled */
  drained(timeoutMs: number): Promise<boolean>;
  close(): void;
  /** true over DNS over TLS (`dns.tls`); `dns.axfr.tlsOnly` transfers only then */
  readonly encrypted: boolean;
}

/**
 * Work a step defers (DnsStep answering with `x.defer`): handed its own copy of the request and
 * who signed it, it resolves the rcode of the reply, or undefined when it answered by itself.
 */
export type DeferredWork = (req: Buffer, signed: UpdateSigner | undefined) => Promise<number | undefined>;

const NO_ANSWERS: readonly Candidate[] = [];

/**
 * One query as the steps see it, and what they write the reply with. The answerer owns one and
 * refills it for every query (nothing is allocated per query); steps read it and must not keep it.
 */
export class QueryScope {
  readonly q = new ParsedQuery();
  readonly w = new ReplyWriter();
  /** what the zone step found for the name (valid once `zone` is set) */
  readonly match = new NameMatch();
  req: Buffer = Buffer.alloc(0);
  src = '';
  udp = true;
  mayWait = false;
  trace: StepTrace[] | undefined = undefined;
  /** the TCP connection's reply side; undefined over UDP and for answers without a connection */
  stream: StreamReply | undefined = undefined;
  status: DecodeStatus = DecodeStatus.Ok;
  /** the reply's size limit (UDP: the client's, or 512; 0 over TCP), less the TSIG's room when signed */
  limit = 0;
  /** the verified TSIG of the query; its reply is signed */
  signer: VerifiedRequest | undefined = undefined;
  /** the served zone the name is in (set by the zone step) */
  zone: Zone | undefined = undefined;
  atApex = false;
  /** the DNSSEC responder when this reply is signed (DO set and `dns.dnssec` on; set by the zone step) */
  sig: DnssecResponder | undefined = undefined;
  /** response code of the last reply; -1 when the packet was dropped */
  lastRcode = 0;
  /** the answered candidates in order; valid until the next query (the array is reused) */
  lastAnswers: readonly Candidate[] = NO_ANSWERS;
  /** the record type the service step answered with (A or AAAA) */
  answerType = 0;

  constructor(private readonly payloadSize: number, private readonly now: () => number) {}

  /** Refills the scope for a new query (the writer is pointed by the caller). */
  start(req: Buffer, src: string, udp: boolean, mayWait: boolean, trace: StepTrace[] | undefined, stream: StreamReply | undefined): void {
    this.req = req;
    this.src = src;
    this.udp = udp;
    this.mayWait = mayWait;
    this.trace = trace;
    this.stream = stream;
    this.signer = undefined;
    this.zone = undefined;
    this.sig = undefined;
    this.lastAnswers = NO_ANSWERS;
  }

  /** The QUERY_KIND bits of the decoded query (status and question read). */
  kind(): number {
    if (this.status !== DecodeStatus.Ok) return QUERY_KIND.Malformed;
    const q = this.q;
    const k = (q.qclass !== 1 ? QUERY_KIND.OtherClass : 0) | (q.qtype === TYPE.AXFR || q.qtype === TYPE.IXFR ? QUERY_KIND.Transfer : 0);
    return k === 0 ? QUERY_KIND.Lookup : k;
  }

  /** True for an RFC 2136 UPDATE (opcode 5, which the decoder leaves NOTIMP for a step to take). */
  get isUpdate(): boolean {
    return this.status === DecodeStatus.NotImp && this.q.opcode === 5;
  }

  /** A reply with no records and `rcode`, sealed. */
  reply(rcode: number, aa = false): true {
    this.w.begin(this.req, this.q, rcode, aa);
    this.lastRcode = rcode;
    this.w.seal(this.q, this.limit, this.payloadSize, 0);
    return true;
  }

  /** Seals the reply the step wrote (begun with `w.begin`), with the ECS scope prefix it answered for. */
  seal(ecsScope: number): true {
    this.lastRcode = this.w.code;
    this.w.seal(this.q, this.limit, this.payloadSize, ecsScope);
    return true;
  }

  /**
   * Answers later, off the answer path: the request and its MAC are copied (a batched receive
   * slot is reused), `work` runs on the copy, and the reply — no records, the rcode `work`
   * resolved (SERVFAIL when it rejected), signed when the request was — is built when it settles,
   * from the copy. `work` resolving undefined answered by itself: `finish` then returns undefined.
   */
  defer(work: DeferredWork): PendingAnswer {
    const own = Buffer.from(this.req);
    const v = this.signer;
    const signer: VerifiedRequest | undefined = v && { ...v, tsig: { ...v.tsig, mac: Buffer.from(v.tsig.mac), other: Buffer.from(v.tsig.other) } };
    const limit = this.limit;
    let rcode: number | undefined = RCODE.SERVFAIL;
    const wait = work(own, signer && { key: signer.key.name, timeSigned: signer.tsig.timeSigned, fudge: signer.tsig.fudge, mac: signer.tsig.mac })
      .then((c) => { rcode = c; }, () => {});
    const finish = () => {
      if (rcode === undefined) return undefined;
      const q = this.q;
      this.w.writeToScratch();
      decodeQuery(own, q);
      this.lastAnswers = NO_ANSWERS;
      this.req = own;
      this.limit = limit;
      this.reply(rcode);
      if (signer) this.w.appendAdditional(signResponse(this.w.sealed(), signer, Math.floor(this.now() / 1000)));
      return this.w.copyOut(limit === 0); // limit 0: TCP, whose replies carry the length prefix
    };
    return { wait, finish };
  }
}
