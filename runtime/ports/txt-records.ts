import type { GenericRow } from '../../core/model/types.js';

/**
 * TXT records (docs/dns.md "TXT records"): a name inside a zone gslbd serves with one or more
 * text values, written over `/api/v1/dns/txt`, by RFC 2136 UPDATE, or as `kind: TxtRecord` in
 * git, and served by the DNS server and in zone transfers. One row per name: its `values` are the
 * record set. Pure.
 */
export interface TxtRecordRow extends GenericRow {
  kind: 'txtrecord';
  /** lower-case, fully qualified, with the trailing dot (like a service's domain) */
  name: string;
  /** the record set: each value one TXT record, split into 255-byte strings on the wire */
  values: string[];
  ttl: number;
}
