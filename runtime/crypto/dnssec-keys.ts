import { createECDH, createHash, createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { nameToWire } from '../net/dns-names.js';

/**
 * DNSSEC signing keys (docs/dns.md "DNSSEC"): read from BIND's `K<zone>+<alg>+<tag>.private`
 * files (what `dnssec-keygen` and `ldns-keygen` write), the public half derived from the private
 * one. Key tags (RFC 4034 Appendix B), DNSKEY and DS record data (RFC 4034 §2, §5; SHA-256 digests,
 * RFC 4509) and the one signing call live here. A key's private half never leaves its KeyObject:
 * nothing here formats it.
 */

/** DNSSEC algorithm numbers (IANA): 13 ECDSA P-256 with SHA-256 (RFC 6605), 15 Ed25519 (RFC 8080). */
export const DNSSEC_ALGORITHM = { ecdsap256sha256: 13, ed25519: 15 } as const;
export type DnssecAlgorithmName = keyof typeof DNSSEC_ALGORITHM;
export type DnssecRole = 'ksk' | 'zsk' | 'csk';
/** publish: in the DNSKEY set, not signing (pre-publication); active: signing; retired: in the set, no longer signing. */
export type DnssecKeyState = 'publish' | 'active' | 'retired';

/** One configured key, loaded. */
export interface DnssecKey {
  file: string;
  role: DnssecRole;
  state: DnssecKeyState;
  algorithm: number;
  /** 257 (SEP: KSK and CSK) or 256 (ZSK) */
  flags: number;
  tag: number;
  /** DNSKEY record data: flags, protocol 3, algorithm, public key */
  dnskey: Buffer;
  privateKey: KeyObject;
}

/** A problem with one configured key: the key path in the configuration and the rule broken (never key material). */
export interface KeyProblem { path: (string | number)[]; value: unknown; rule: string }

/** RFC 4034 Appendix B: the key tag of DNSKEY record data. */
export function keyTag(rdata: Buffer): number {
  let ac = 0;
  for (let i = 0; i < rdata.length; i++) ac += i & 1 ? rdata[i]! : rdata[i]! << 8;
  ac += (ac >> 16) & 0xffff;
  return ac & 0xffff;
}

/** DNSKEY record data (RFC 4034 §2.1) for a public key in DNSSEC wire form. */
export function dnskeyRdata(flags: number, algorithm: number, publicKey: Buffer): Buffer {
  const out = Buffer.alloc(4 + publicKey.length);
  out.writeUInt16BE(flags, 0);
  out[2] = 3;
  out[3] = algorithm;
  publicKey.copy(out, 4);
  return out;
}

/** DS record data (RFC 4034 §5.1.4) with a SHA-256 digest (digest type 2, RFC 4509) of `owner`'s DNSKEY. */
export function dsRdata(owner: string, dnskey: Buffer): Buffer {
  const digest = createHash('sha256').update(nameToWire(owner.toLowerCase())).update(dnskey).digest();
  const out = Buffer.alloc(4 + digest.length);
  out.writeUInt16BE(keyTag(dnskey), 0);
  out[2] = dnskey[3]!;
  out[3] = 2;
  digest.copy(out, 4);
  return out;
}

/** The key pair of a private key in BIND's `PrivateKey:` form: the P-256 scalar, or the Ed25519 seed. */
export function keyPairOf(algorithm: number, secret: Buffer): { privateKey: KeyObject; publicKey: Buffer } {
  if (algorithm === 13) {
    // The scalar is an integer: BIND writes it without its leading zero bytes (about one key in
    // 256 is 31 bytes long), so a shorter one is padded back to 32.
    if (secret.length === 0 || secret.length > 32) throw new Error('an ECDSA P-256 private key is at most 32 bytes');
    if (secret.length < 32) secret = Buffer.concat([Buffer.alloc(32 - secret.length), secret]);
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(secret);
    const pub = ecdh.getPublicKey(); // 04 || x || y
    const b64 = (b: Buffer) => b.toString('base64url');
    const privateKey = createPrivateKey({ key: { kty: 'EC', crv: 'P-256', d: b64(secret), x: b64(pub.subarray(1, 33)), y: b64(pub.subarray(33)) }, format: 'jwk' });
    return { privateKey, publicKey: pub.subarray(1) };
  }
  if (algorithm === 15) {
    if (secret.length !== 32) throw new Error('an Ed25519 private key is 32 bytes');
    // PKCS#8 wrapping of a raw Ed25519 seed (RFC 8410 §7)
    const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), secret]);
    const privateKey = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
    return { privateKey, publicKey: Buffer.from(jwk.x!, 'base64url') };
  }
  throw new Error(`algorithm ${algorithm} is not supported (13 ECDSAP256SHA256, 15 ED25519)`);
}

/**
 * Signs `data` with a key of `algorithm`: ECDSA P-256 over SHA-256 as r||s (RFC 6605 §4), or
 * Ed25519 (RFC 8080 §4).
 */
export function signWith(algorithm: number, key: KeyObject, data: Buffer): Buffer {
  return algorithm === 13 ? sign('sha256', data, { key, dsaEncoding: 'ieee-p1363' }) : sign(null, data, key);
}

/** The `.private` file of a configured key (the base name, the `.key` or the `.private` file may be given). */
export function privateFileOf(file: string): string {
  return `${file.replace(/\.(key|private)$/, '')}.private`;
}

/**
 * Reads one key in BIND's private-key format (`Private-key-format: v1.x`, `Algorithm: N`,
 * `PrivateKey: <base64>`). Throws an Error whose message names the file, never its content.
 */
export function readPrivateKeyFile(file: string): { algorithm: number; privateKey: KeyObject; publicKey: Buffer } {
  const path = privateFileOf(file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const field = (k: string) => new RegExp(`^${k}:[ \\t]*(\\S+)`, 'm').exec(text)?.[1];
  const algorithm = Number(field('Algorithm'));
  const secret = field('PrivateKey');
  if (!field('Private-key-format') || !Number.isInteger(algorithm) || !secret) throw new Error(`${path} is not a BIND private key file (Private-key-format, Algorithm and PrivateKey lines expected)`);
  try {
    return { algorithm, ...keyPairOf(algorithm, Buffer.from(secret, 'base64')) };
  } catch (err) {
    throw new Error(`${path}: ${(err as Error).message}`);
  }
}

/** The `dns.dnssec` settings the keys are loaded from (runtime/config/types.ts). */
export interface DnssecKeyConfig {
  enabled: boolean; algorithm: 'ecdsap256sha256' | 'ed25519';
  keys: readonly { file: string; role: 'ksk' | 'zsk' | 'csk'; state: 'publish' | 'active' | 'retired' }[];
}

/**
 * Loads the keys of `dns.dnssec` and checks them: readable BIND private keys of the configured
 * algorithm, a key tag that matches the file name when the name carries one (`K…+013+12345`: a
 * different tag means the role's flags are not the ones the key was made with), no key twice, and
 * at least one active key to sign the DNSKEY set (KSK or CSK) and one to sign the rest (ZSK or
 * CSK). Returns the keys and every problem; the problems quote file names and tags only.
 */
export function loadDnssecKeys(cfg: DnssecKeyConfig): { keys: DnssecKey[]; problems: KeyProblem[] } {
  const keys: DnssecKey[] = [];
  const problems: KeyProblem[] = [];
  const want = DNSSEC_ALGORITHM[cfg.algorithm];
  const tags = new Map<number, number>();
  cfg.keys.forEach((k, i) => {
    const path = ['dns', 'dnssec', 'keys', i, 'file'];
    let read;
    try {
      read = readPrivateKeyFile(k.file);
    } catch (err) {
      problems.push({ path, value: k.file, rule: (err as Error).message });
      return;
    }
    if (read.algorithm !== want) {
      problems.push({ path, value: k.file, rule: `the key is algorithm ${read.algorithm}, dns.dnssec.algorithm is ${cfg.algorithm} (${want})` });
      return;
    }
    const flags = k.role === 'zsk' ? 256 : 257;
    const dnskey = dnskeyRdata(flags, read.algorithm, read.publicKey);
    const tag = keyTag(dnskey);
    const named = /\+(\d{3})\+(\d{5})(\.(key|private))?$/.exec(basename(k.file));
    if (named && Number(named[2]) !== tag) {
      problems.push({ path: ['dns', 'dnssec', 'keys', i, 'role'], value: k.role, rule: `with flags ${flags} the key's tag is ${tag}, not ${Number(named[2])} as in its file name: the role does not match the key (KSK and CSK: 257, ZSK: 256)` });
      return;
    }
    const first = tags.get(tag);
    if (first !== undefined) { problems.push({ path, value: k.file, rule: `is the same key as dns.dnssec.keys[${first}] (tag ${tag})` }); return; }
    tags.set(tag, i);
    keys.push({ file: k.file, role: k.role, state: k.state, algorithm: read.algorithm, flags, tag, dnskey, privateKey: read.privateKey });
  });
  if (cfg.enabled && problems.length === 0 && cfg.keys.length > 0) {
    const active = keys.filter((k) => k.state === 'active');
    if (!active.some((k) => k.role !== 'zsk')) problems.push({ path: ['dns', 'dnssec', 'keys'], value: `${cfg.keys.length} keys`, rule: 'needs an active key with role ksk or csk (it signs the DNSKEY set)' });
    if (!active.some((k) => k.role !== 'ksk')) problems.push({ path: ['dns', 'dnssec', 'keys'], value: `${cfg.keys.length} keys`, rule: 'needs an active key with role zsk or csk (it signs every other record set)' });
  }
  return { keys, problems };
}
