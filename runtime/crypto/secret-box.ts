import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { GslbError } from '../errors.js';

/**
 * What a sealed secret is for. The purpose is bound to the ciphertext as AES-GCM additional
 * authenticated data, so a value sealed for one field does not open as another.
 */
export type SecretPurpose = 'totp' | 'smtp-password';

/** True for a 32-byte key written as 64 hex characters (the form GSLB_SECRET_KEY must have). */
export function isValidSecretKey(hex: string): boolean {
  return /^[0-9a-fA-F]{64}$/.test(hex);
}

/** How one stored format is read: its encoding, its AAD, and the one purpose it may open as. */
interface Format {
  encoding: 'base64url' | 'base64';
  /** the purpose a legacy format was written for; undefined: the current format, any purpose */
  onlyFor?: SecretPurpose;
  aad(purpose: SecretPurpose): Buffer | undefined;
}

const CURRENT = 'v2';

/**
 * The formats `open` reads. `v1` (TOTP secrets, no AAD) and `gcm1` (SMTP passwords, fixed AAD) are
 * what the two former helpers wrote; they stay readable so stored values need no migration, and
 * each opens only for the purpose it was written for, so they cannot be replayed either.
 */
const FORMATS = new Map<string, Format>([
  [CURRENT, { encoding: 'base64url', aad: (p) => aadOf(p) }],
  ['v1', { encoding: 'base64url', onlyFor: 'totp', aad: () => undefined }],
  ['gcm1', { encoding: 'base64', onlyFor: 'smtp-password', aad: () => aadOf('smtp-password') }],
]);

function aadOf(purpose: SecretPurpose): Buffer {
  return Buffer.from(`gslbd:${purpose}`);
}

/**
 * AES-256-GCM sealing of small secrets at rest under GSLB_SECRET_KEY (gslb-config-auth.md §2).
 * `seal` writes `v2:<iv>:<tag>:<ciphertext>` (base64url, fresh 96-bit IV) with the purpose as AAD;
 * `open` also reads the legacy `v1:` and `gcm1:` forms (see FORMATS). What to do without a key is
 * each caller's choice (docs/auth.md, docs/alerts.md), so there is no keyless SecretBox.
 */
export class SecretBox {
  private readonly key: Buffer;

  /** Throws CONFIG_INVALID when the key is not 64 hex characters. */
  constructor(hexKey: string) {
    if (!isValidSecretKey(hexKey)) throw new GslbError('CONFIG_INVALID', 'GSLB_SECRET_KEY must be 32 bytes written as 64 hex characters (e.g. `openssl rand -hex 32`)');
    this.key = Buffer.from(hexKey, 'hex');
  }

  /** Encrypts a UTF-8 string for `purpose` in the current format. */
  seal(plain: string, purpose: SecretPurpose): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    c.setAAD(aadOf(purpose));
    const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return [CURRENT, iv.toString('base64url'), c.getAuthTag().toString('base64url'), ct.toString('base64url')].join(':');
  }

  /**
   * Decrypts a sealed string. Throws when the format is unknown or belongs to another purpose, and
   * when the value was altered, sealed for another purpose, or sealed under another key.
   */
  open(sealed: string, purpose: SecretPurpose): string {
    const [tagName, iv, tag, ct] = sealed.split(':');
    const format = FORMATS.get(tagName ?? '');
    if (!format || !iv || !tag || ct === undefined) throw new Error('sealed secret has an unknown format');
    if (format.onlyFor && format.onlyFor !== purpose) throw new Error(`a ${tagName} sealed secret cannot be opened as ${purpose}`);
    const d = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, format.encoding));
    const aad = format.aad(purpose);
    if (aad) d.setAAD(aad);
    d.setAuthTag(Buffer.from(tag, format.encoding));
    return Buffer.concat([d.update(Buffer.from(ct, format.encoding)), d.final()]).toString('utf8');
  }
}
