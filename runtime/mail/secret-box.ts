import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Encryption at rest for the stored SMTP password (AES-256-GCM keyed with GSLB_SECRET_KEY).
 * Sealed values look like `gcm1:<iv>:<tag>:<ciphertext>` (base64). Without a key, values are kept
 * as `plain:<text>` so that a later key can still read them; docs/alerts.md explains the trade-off.
 */
export interface SecretBox {
  /** true when a key is set and values are encrypted */
  readonly encrypting: boolean;
  /** Seals `plain` for storage. */
  seal(plain: string): string;
  /** Opens a stored value. Throws when it is encrypted and the key is missing or different. */
  open(stored: string): string;
}

const AAD = Buffer.from('gslbd:smtp-password');

/** True for a 32-byte key written as 64 hex characters. */
export function isValidSecretKey(hex: string): boolean {
  return /^[0-9a-fA-F]{64}$/.test(hex);
}

/**
 * Builds a SecretBox from GSLB_SECRET_KEY (undefined or empty: no encryption). Throws when the key
 * is set but is not 64 hex characters, so a typo is caught at startup rather than at first use.
 */
export function createSecretBox(hexKey: string | undefined): SecretBox {
  if (!hexKey) {
    return {
      encrypting: false,
      seal: (plain) => `plain:${plain}`,
      open: (stored) => {
        if (stored.startsWith('plain:')) return stored.slice(6);
        throw new Error('the stored SMTP password is encrypted and GSLB_SECRET_KEY is not set');
      },
    };
  }
  if (!isValidSecretKey(hexKey)) throw new Error('GSLB_SECRET_KEY must be 32 bytes written as 64 hex characters');
  const key = Buffer.from(hexKey, 'hex');
  return {
    encrypting: true,
    seal(plain) {
      const iv = randomBytes(12);
      const c = createCipheriv('aes-256-gcm', key, iv);
      c.setAAD(AAD);
      const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
      return `gcm1:${iv.toString('base64')}:${c.getAuthTag().toString('base64')}:${ct.toString('base64')}`;
    },
    open(stored) {
      if (stored.startsWith('plain:')) return stored.slice(6);
      const [tagName, iv, tag, ct] = stored.split(':');
      if (tagName !== 'gcm1' || iv === undefined || tag === undefined || ct === undefined) throw new Error('the stored SMTP password has an unknown format');
      try {
        const d = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
        d.setAAD(AAD);
        d.setAuthTag(Buffer.from(tag, 'base64'));
        return Buffer.concat([d.update(Buffer.from(ct, 'base64')), d.final()]).toString('utf8');
      } catch (cause) {
        throw new Error('the stored SMTP password cannot be decrypted: GSLB_SECRET_KEY differs from the key it was stored with', { cause });
      }
    },
  };
}
