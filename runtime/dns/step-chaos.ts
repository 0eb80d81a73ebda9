import { PASS, QUERY_KIND, type DnsStep, type QueryScope, type StepResult } from './step.js';
import { RCODE, TYPE } from './wire-reply.js';

/** CHAOS class (RFC 1035 §3.2.4). */
const CLASS_CH = 3;

/**
 * The provenance TXT record of the served revision (docs/dns.md "Provenance over CHAOS"): a
 * CHAOS TXT (or ANY) query for `dns.versionName`, answered class CHAOS, TTL 0 (it changes with
 * every apply). Other CHAOS queries pass (the refuse step answers them REFUSED).
 */
export class ChaosStep implements DnsStep {
  readonly name = 'chaos';
  readonly kinds = QUERY_KIND.OtherClass;
  /** lower-case, fully qualified `dns.versionName` */
  private readonly versionName: string;

  constructor(versionName: string, private readonly versionTxt: () => Buffer) {
    const v = versionName.toLowerCase();
    this.versionName = v.endsWith('.') ? v : `${v}.`;
  }

  answer(x: QueryScope): StepResult {
    const q = x.q;
    if (q.qclass !== CLASS_CH || (q.qtype !== TYPE.TXT && q.qtype !== TYPE.ANY) || q.name !== this.versionName) return PASS;
    const w = x.w;
    w.begin(x.req, q, RCODE.NOERROR, true);
    w.addAnswerOfClass(TYPE.TXT, CLASS_CH, 0, this.versionTxt());
    return x.seal(0);
  }
}
