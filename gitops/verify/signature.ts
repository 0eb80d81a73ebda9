import * as openpgp from 'openpgp';
import { stalled } from '../errors.js';
import type { CommitParts } from './commit-object.js';

/** Who signed a verified commit. */
export interface Signer {
  /** primary key fingerprint (upper-case hex) */
  fingerprint: string;
  /** fingerprint of the (sub)key that made the signature */
  signingKey: string;
  /** first user ID of the key, e.g. `Ops <ops@example.test>` */
  userId: string;
}

/**
 * Reads an armored public keyring: one or more armor blocks (as `cat a.asc b.asc` makes), each with
 * one or more keys. Errors: stalled KeyringInvalid.
 */
export async function readKeyring(armored: string, file = 'keyring'): Promise<openpgp.PublicKey[]> {
  try {
    const blocks = armored.split(/(?=-----BEGIN PGP (?:PUBLIC|PRIVATE) KEY BLOCK-----)/).filter((b) => b.includes('-----BEGIN PGP'));
    if (blocks.length === 0) throw new Error('no armored key block found');
    const keys = (await Promise.all(blocks.map((b) => openpgp.readKeys({ armoredKeys: b })))).flat();
    return keys.map((k) => (k.isPrivate() ? k.toPublic() : k)) as openpgp.PublicKey[];
  } catch (err) {
    throw stalled('KeyringInvalid', `cannot read OpenPGP keys from ${file}: ${(err as Error).message}`, { cause: err });
  }
}

const norm = (fp: string) => fp.replace(/\s+/g, '').toUpperCase();

/** True when `fp` (a full fingerprint or a 16-hex key ID) names the primary key or the signing key. */
export function signerAllowed(signer: Signer, allowed: readonly string[]): boolean {
  if (allowed.length === 0) return true;
  return allowed.map(norm).some((a) => a === signer.fingerprint || a === signer.signingKey
    || (a.length === 16 && (signer.fingerprint.endsWith(a) || signer.signingKey.endsWith(a))));
}

/**
 * Verifies a commit's OpenPGP signature (DESIGN decision 5): the signature over the commit payload
 * must verify against a key of the keyring, and the primary or signing key fingerprint must be in
 * `allowed` when that list is non-empty. Returns the signer. Errors (all stalled, a new commit is
 * needed): SignatureMissing, SignatureUnsupported (SSH or X.509), SignerUnknown, SignatureInvalid,
 * SignerNotAllowed.
 */
export function verifyCommitSignature(commit: CommitParts, keys: readonly openpgp.PublicKey[], allowed: readonly string[]): Promise<Signer> {
  return verifyDetachedSignature(commit.payload, commit.signature, keys, allowed, 'commit');
}

/**
 * Verifies an armored detached OpenPGP signature over `payload` (a commit's or an annotated tag's),
 * as verifyCommitSignature does; `what` names the object in messages (`commit`, `tag v1.2`).
 * Returns the signer. Errors: the stalled reasons of verifyCommitSignature.
 */
export async function verifyDetachedSignature(payload: Buffer, armored: string | undefined, keys: readonly openpgp.PublicKey[], allowed: readonly string[], what: string): Promise<Signer> {
  if (!armored) throw stalled('SignatureMissing', `${what} is not signed; gitops.requireSignature is true`);
  if (!armored.includes('BEGIN PGP SIGNATURE')) {
    throw stalled('SignatureUnsupported', `${what} is signed with a non-OpenPGP signature (SSH or X.509); only OpenPGP signatures are verified`);
  }
  let signature: openpgp.Signature;
  try {
    signature = await openpgp.readSignature({ armoredSignature: armored });
  } catch (err) {
    throw stalled('SignatureInvalid', `${what} signature cannot be parsed: ${(err as Error).message}`, { cause: err });
  }
  const keyIds = signature.getSigningKeyIDs();
  const key = keys.find((k) => keyIds.some((id) => k.getKeys(id).length > 0));
  const issuer = keyIds.map((id) => id.toHex().toUpperCase()).join(', ');
  if (!key) throw stalled('SignerUnknown', `${what} is signed by key ${issuer}, which is not in the keyring`);
  const message = await openpgp.createMessage({ binary: new Uint8Array(payload) });
  const result = await openpgp.verify({ message, signature, verificationKeys: [key], format: 'binary' });
  const sig = result.signatures[0];
  try {
    if (!sig) throw new Error('no signature packet');
    await sig.verified;
  } catch (err) {
    throw stalled('SignatureInvalid', `${what} signature by key ${issuer} does not verify: ${(err as Error).message}`, { cause: err });
  }
  const sub = key.getKeys(sig.keyID)[0]!;
  const signer: Signer = {
    fingerprint: key.getFingerprint().toUpperCase(),
    signingKey: sub.getFingerprint().toUpperCase(),
    userId: key.getUserIDs()[0] ?? '',
  };
  if (!signerAllowed(signer, allowed)) {
    throw stalled('SignerNotAllowed', `${what} is signed by ${signer.fingerprint} (${signer.userId}), which is not in gitops.allowedSigners`);
  }
  return signer;
}
