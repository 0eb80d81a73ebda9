import { createHash } from 'node:crypto';
import { signWith, type DnssecKey } from '../crypto/dnssec-keys.js';
import { DNSSEC_TYPE, rrsigHeader, signedData } from './dnssec-wire.js';

/** Signing window and cache bounds (docs/dns.md "DNSSEC"). */
export interface SignerOptions {
  /** seconds from signing to expiration (`dns.dnssec.signatureValidity`, default 7 days) */
  validity: number;
  /** most RRsets whose signatures are kept (`dns.dnssec.cacheSize`) */
  cacheSize: number;
  /** wall clock in ms */
  now: () => number;
}

/** Inception is set this far in the past, for validators whose clocks run behind (seconds). */
export const INCEPTION_SKEW = 3600;

interface Cached { sigs: Buffer[]; until: number }

/** Keys longer than this are replaced by their SHA-256: a TXT set of 16 KB must not be kept twice. */
const MAX_KEY = 512;

/**
 * Signs RRsets with the active keys, online (RFC 4034 §3, §6): the DNSKEY set with the KSKs (or
 * CSKs), every other set with the ZSKs (or CSKs), one RRSIG per active key of that role. Inception
 * is an hour back, expiration `validity` ahead; a signature is cached per exact RRset (owner, type,
 * TTL, record data as a set, signer) and used for a quarter of the validity, so every signature
 * served has at least three quarters of it left and a changed RRset (a new SOA serial, another
 * selection) gets its own. The cache holds at most `cacheSize` sets in two generations of half
 * that: when the young one is full it becomes the old one and the old one is dropped, and a hit in
 * the old one moves to the young one, so sets in use stay. No deletes on the query path: a V8 Map
 * that deletes and re-adds entries (an exact LRU) costs tens of µs per hit once it holds 100,000.
 */
export class RrsetSigner {
  private young = new Map<string, Cached>();
  private old = new Map<string, Cached>();
  private readonly half: number;
  private readonly ksks: DnssecKey[];
  private readonly zsks: DnssecKey[];
  /** DNSKEY record data of every published key (publish, active and retired states) */
  readonly dnskeys: Buffer[];
  /** signatures made (cache misses), for tests and benchmarks */
  signed = 0;

  constructor(keys: readonly DnssecKey[], private readonly opts: SignerOptions) {
    this.ksks = keys.filter((k) => k.state === 'active' && k.role !== 'zsk');
    this.zsks = keys.filter((k) => k.state === 'active' && k.role !== 'ksk');
    this.dnskeys = keys.map((k) => k.dnskey);
    this.half = Math.max(1, Math.floor(opts.cacheSize / 2));
  }

  /**
   * The RRSIG record data for one RRset: `owner` and `signer` in canonical wire form, `labels` the
   * owner's label count. Allocates a cache key per call; signs only on a miss or a stale entry.
   */
  sign(owner: Buffer, labels: number, type: number, ttl: number, rdatas: readonly Buffer[], signer: Buffer): Buffer[] {
    const now = Math.floor(this.opts.now() / 1000);
    const key = cacheKey(owner, type, ttl, rdatas, signer);
    const young = this.young.get(key);
    if (young && now < young.until) return young.sigs;
    const old = this.old.get(key);
    if (old && now < old.until) {
      this.remember(key, old);
      return old.sigs;
    }
    const inception = now - INCEPTION_SKEW;
    const expiration = now + this.opts.validity;
    const sigs: Buffer[] = [];
    for (const k of type === DNSSEC_TYPE.DNSKEY ? this.ksks : this.zsks) {
      const header = rrsigHeader(type, k.algorithm, labels, ttl, expiration, inception, k.tag, signer);
      sigs.push(Buffer.concat([header, signWith(k.algorithm, k.privateKey, signedData(header, owner, type, ttl, rdatas))]));
      this.signed++;
    }
    this.remember(key, { sigs, until: now + Math.floor(this.opts.validity / 4) });
    return sigs;
  }

  private remember(key: string, entry: Cached): void {
    if (this.young.size >= this.half && !this.young.has(key)) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, entry);
  }

  /** RRsets whose signatures are cached (an RRset in both generations counts twice). */
  get cached(): number {
    return this.young.size + this.old.size;
  }
}

/** The cache key of an RRset: its canonical parts, record data sorted so any order hits. */
function cacheKey(owner: Buffer, type: number, ttl: number, rdatas: readonly Buffer[], signer: Buffer): string {
  const sorted = rdatas.length > 1 ? [...rdatas].sort(Buffer.compare) : rdatas;
  let key = `${type}/${ttl}/${owner.toString('latin1')}/${signer.toString('latin1')}`;
  for (const rd of sorted) key += `/${rd.length}:${rd.toString('latin1')}`;
  return key.length > MAX_KEY ? createHash('sha256').update(key, 'latin1').digest('base64') : key;
}
