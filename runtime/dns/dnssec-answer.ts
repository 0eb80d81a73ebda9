import type { DnssecKey } from '../crypto/dnssec-keys.js';
import { RrsetSigner, type SignerOptions } from './dnssec-signer.js';
import { DNSSEC_TYPE, canonicalName, compactNsecRdata, wireLabels } from './dnssec-wire.js';
import type { ServicePlan } from './service-plan.js';
import type { ParsedQuery } from './wire-query.js';
import { TYPE, nameToWire, type ReplyWriter } from './wire-reply.js';
import type { NameMatch, Zone } from './zone-index.js';

/** TTL of the DNSKEY set, like the other apex sets (SOA, NS). */
export const DNSKEY_TTL = 3600;

interface Apex { wire: Buffer; labels: number }

const hasFamily = (plan: ServicePlan | undefined, family: number) => plan !== undefined && plan.members.some((m) => m.family === family);

/**
 * The types that exist at a name, for the NSEC of a NODATA answer: the apex sets, addresses where
 * a service (or the static endpoints) has members of that family, TXT where a record set is, and
 * RRSIG and NSEC everywhere (RFC 4034 §4.1.2). A name that does not exist has NXNAME (RFC 9824 §2).
 */
export function typesAt(m: NameMatch, atApex: boolean): number[] {
  if (m.kind === 'nxdomain') return [DNSSEC_TYPE.RRSIG, DNSSEC_TYPE.NSEC, DNSSEC_TYPE.NXNAME];
  const out: number[] = [];
  if (hasFamily(m.plan, 4)) out.push(TYPE.A);
  if (atApex) out.push(TYPE.NS, TYPE.SOA);
  if (m.txt) out.push(TYPE.TXT);
  if (hasFamily(m.plan, 6)) out.push(TYPE.AAAA);
  out.push(DNSSEC_TYPE.RRSIG, DNSSEC_TYPE.NSEC);
  if (atApex) out.push(DNSSEC_TYPE.DNSKEY);
  return out;
}

/**
 * The DNSSEC side of the answer path (docs/dns.md "DNSSEC"): RRSIGs after each answer RRset of a
 * reply to a query with the DO bit, the DNSKEY set at every apex, and compact denial of existence
 * (RFC 9824) for negative answers. Queries without DO never reach it. One per Answerer; not
 * reentrant (`begin` keeps the query's owner name).
 */
export class DnssecResponder {
  readonly signer: RrsetSigner;
  private readonly apexes = new WeakMap<Zone, Apex>();
  private owner: Buffer = Buffer.alloc(1);
  private ownerLabels = 0;

  constructor(keys: readonly DnssecKey[], opts: SignerOptions) {
    this.signer = new RrsetSigner(keys, opts);
  }

  /** Starts a signed reply to `q`: the question name in canonical form is the owner of answers and NSEC records. */
  begin(req: Buffer, q: ParsedQuery): void {
    this.owner = canonicalName(req, 12);
    this.ownerLabels = q.labels;
  }

  private apex(zone: Zone): Apex {
    let a = this.apexes.get(zone);
    if (!a) {
      const wire = nameToWire(zone.name);
      a = { wire, labels: wireLabels(wire) };
      this.apexes.set(zone, a);
    }
    return a;
  }

  /** Adds the RRSIGs of the answer RRset just written (owned by the question name). */
  signAnswer(w: ReplyWriter, zone: Zone, type: number, ttl: number, rdatas: readonly Buffer[]): void {
    if (rdatas.length === 0) return;
    for (const sig of this.signer.sign(this.owner, this.ownerLabels, type, ttl, rdatas, this.apex(zone).wire)) w.addAnswer(DNSSEC_TYPE.RRSIG, ttl, sig);
  }

  /** Answers the DNSKEY set at the apex, signed by the KSKs when `signed`. */
  addDnskeys(w: ReplyWriter, zone: Zone, signed: boolean): void {
    for (const k of this.signer.dnskeys) w.addAnswer(DNSSEC_TYPE.DNSKEY, DNSKEY_TTL, k);
    if (signed) this.signAnswer(w, zone, DNSSEC_TYPE.DNSKEY, DNSKEY_TTL, this.signer.dnskeys);
  }

  /**
   * The signed part of a negative answer, after its SOA (written by the caller at `soaAt`): the
   * SOA's RRSIG, then an NSEC at the question name whose next name is its immediate successor
   * (RFC 9824 §3: nothing else is covered, so the zone cannot be walked) listing `types` minus
   * the one asked for, and its RRSIG. TTLs are the SOA minimum (RFC 9077).
   */
  addDenial(w: ReplyWriter, zone: Zone, soaAt: number, qtype: number, types: readonly number[]): void {
    const apex = this.apex(zone);
    for (const sig of this.signer.sign(apex.wire, apex.labels, TYPE.SOA, zone.negativeTtl, [zone.soa], apex.wire)) w.addAuthority(soaAt, DNSSEC_TYPE.RRSIG, zone.negativeTtl, sig);
    const nsec = compactNsecRdata(this.owner, types.filter((t) => t !== qtype));
    if (!nsec) return;
    w.addAuthority(12, DNSSEC_TYPE.NSEC, zone.negativeTtl, nsec);
    for (const sig of this.signer.sign(this.owner, this.ownerLabels, DNSSEC_TYPE.NSEC, zone.negativeTtl, [nsec], apex.wire)) w.addAuthority(12, DNSSEC_TYPE.RRSIG, zone.negativeTtl, sig);
  }
}
