import { CATALOG_TTL, type Catalog } from './catalog-zone.js';
import { PASS, type DnsStep, type QueryScope, type StepResult } from './step.js';
import { RCODE, TYPE } from './wire-reply.js';

/**
 * Answers every query for a name in the catalog zone (`dns.catalog.zone`, RFC 9432; docs/dns.md
 * "Catalog zone") from the catalog of the current zone index: the apex SOA and NS, the `version`
 * TXT, the members' PTR records; NODATA for other types and for `zones.<catalog>`, NXDOMAIN for any
 * other name, each with the SOA in authority. The catalog is not signed with DNSSEC: it is read by
 * secondaries over zone transfers, not resolved. Passes for names outside the catalog.
 */
export class CatalogStep implements DnsStep {
  readonly name = 'catalog';

  constructor(private readonly catalog: () => Catalog | undefined) {}

  answer(x: QueryScope): StepResult {
    const c = this.catalog();
    if (!c) return PASS;
    const q = x.q;
    const apex = c.zone.name;
    if (q.name !== apex && !q.name.endsWith(`.${apex}`)) return PASS;
    const w = x.w;
    w.begin(x.req, q, RCODE.NOERROR, true);
    const sets = c.names.get(q.name);
    if (sets) {
      for (const [type, list] of sets) {
        if (q.qtype !== type && q.qtype !== TYPE.ANY) continue;
        const ttl = type === TYPE.SOA || type === TYPE.NS ? 3600 : CATALOG_TTL;
        for (const rd of list) w.addAnswer(type, ttl, rd);
      }
    } else if (q.name !== c.zonesLabel) {
      w.setRcode(RCODE.NXDOMAIN);
    }
    if (w.answers === 0) w.addAuthority(w.nameOffset(q.labels - c.zone.labels), TYPE.SOA, c.zone.negativeTtl, c.zone.soa);
    return x.seal(0);
  }
}
