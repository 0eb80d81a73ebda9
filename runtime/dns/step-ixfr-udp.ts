import type { Config } from '../config/types.js';
import { PASS, type DnsStep, type QueryScope, type StepResult } from './step.js';
import { transferScopes } from './transfer-scope.js';
import { RCODE, TYPE } from './wire-reply.js';
import type { NameIndex } from './zone-index.js';
import type { TransferScope } from './zone-records.js';

/**
 * IXFR over UDP (RFC 1995 §2; docs/dns.md "Incremental transfers"): the reply is the zone's
 * current SOA alone, which RFC 1995 §2 prescribes when the answer does not fit in a datagram. Here
 * no difference is ever sent over UDP: the DNS worker threads, which answer UDP, hold no journal,
 * and a client that is behind sees the newer serial and asks again over TCP, where the transfer
 * step answers. The same checks as a transfer over TCP decide who gets even that: transfers on,
 * the apex of a served zone, signed with a key that transfers something (or unsigned without
 * `requireTsig`); everything else passes to the refuse step (REFUSED, signed when the query was).
 */
export class IxfrUdpStep implements DnsStep {
  readonly name = 'ixfr-udp';
  private readonly scopes: ReadonlyMap<string, TransferScope>;

  constructor(private readonly dns: Pick<Config['dns'], 'axfr' | 'update'>, private readonly names: () => NameIndex) {
    this.scopes = transferScopes(dns);
  }

  answer(x: QueryScope): StepResult {
    const q = x.q;
    if (!x.udp || q.qtype !== TYPE.IXFR || q.qclass !== 1) return PASS;
    if (x.signer ? !this.scopes.has(x.signer.key.name) : this.dns.axfr.requireTsig) return PASS;
    const zone = this.names().zones.get(q.name);
    if (!zone) return PASS;
    x.w.begin(x.req, q, RCODE.NOERROR, true);
    x.w.addAnswer(TYPE.SOA, 3600, zone.soa);
    return x.seal(0);
  }
}
