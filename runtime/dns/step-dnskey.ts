import type { DnssecResponder } from './dnssec-answer.js';
import { DNSSEC_TYPE } from './dnssec-wire.js';
import { PASS, QUERY_KIND, type DnsStep, type QueryScope, type StepResult } from './step.js';

/** DNSSEC (`dns.dnssec`): a DNSKEY query at a zone's apex gets the zone's keys (signed when DO is set). */
export class DnskeyStep implements DnsStep {
  readonly name = 'dnskey';
  readonly kinds = QUERY_KIND.Lookup;

  constructor(private readonly dnssec: DnssecResponder) {}

  answer(x: QueryScope): StepResult {
    if (!x.atApex || x.q.qtype !== DNSSEC_TYPE.DNSKEY) return PASS;
    this.dnssec.addDnskeys(x.w, x.zone!, x.sig !== undefined);
    return x.seal(0);
  }
}
