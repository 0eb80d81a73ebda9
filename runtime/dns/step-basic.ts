import { PASS, QUERY_KIND, type DnsStep, type QueryScope, type StepResult } from './step.js';
import { DecodeStatus } from './wire-query.js';
import { RCODE, TYPE } from './wire-reply.js';

/** A query the decoder rejected (FORMERR, NOTIMP for an opcode no step took): its rcode, no records. */
export class MalformedStep implements DnsStep {
  readonly name = 'malformed';
  readonly kinds = QUERY_KIND.Malformed;
  answer(x: QueryScope): StepResult {
    return x.status === DecodeStatus.Ok ? PASS : x.reply(x.status);
  }
}

/** Anything but class IN, and a zone transfer no transfer step took (over UDP, transfers off, or plain TCP with `dns.axfr.tlsOnly`): REFUSED. */
export class RefuseStep implements DnsStep {
  readonly name = 'refuse';
  readonly kinds = QUERY_KIND.OtherClass | QUERY_KIND.Transfer;
  answer(x: QueryScope): StepResult {
    const q = x.q;
    return q.qclass !== 1 || q.qtype === TYPE.AXFR || q.qtype === TYPE.IXFR ? x.reply(RCODE.REFUSED) : PASS;
  }
}
