import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { GslbError } from '../errors.js';

/**
 * AES-256-GCM encryption of small secrets at rest (TOTP secrets) under GSLB_SECRET_KEY
 * (gslb-config-auth.md §2: 32 bytes as 64 hex characters). The sealed form is
 * `v1:<iv b64url>:<tag b64url>:<ciphertext b64url>`.
 */
export class SecretBox {
  private readonly key: Buffer;
  /** Throws CONFIG_INVALID when the key is not 64 hex characters. */
  constructor(hexKey: string) {
    if (!/^[0-9a-fA-F]{64}$/.test(hexKey)) throw new GslbError('CONFIG_INVALID', 'GSLB_SECRET_KEY must be 32 bytes written as 64 hex characters (e.g. `openssl rand -hex 32`)');
    this.key = Buffer.from(hexKey, 'hex');
  }

  /** Encrypts a UTF-8 string with a fresh 96-bit IV. */
  seal(plain: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return ['v1', iv.toString('base64url'), c.getAuthTag().toString('base64url'), ct.toString('base64url')].join(':');
  }

  /** Decrypts a sealed string; throws when it was altered or sealed under another key. */
  open(sealed: string): string {
    const [v, iv, tag, ct] = sealed.split(':');
    if (v !== 'v1' || !iv || !tag || ct === undefined) throw new Error('sealed secret has an unknown format');
    const d = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    d.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
  }
}
