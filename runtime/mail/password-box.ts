import { SecretBox } from '../crypto/secret-box.js';

/**
 * Encryption at rest for stored SMTP passwords: the shared SecretBox (runtime/crypto/secret-box.ts)
 * with the purpose `smtp-password`, plus the mail-only keyless mode. Without GSLB_SECRET_KEY values
 * are kept as `plain:<text>` so that a later key can still read them; docs/alerts.md explains the
 * trade-off.
 */
export interface PasswordBox {
  /** true when a key is set and values are encrypted */
  readonly encrypting: boolean;
  /** Seals `plain` for storage. */
  seal(plain: string): string;
  /** Opens a stored value. Throws when it is encrypted and the key is missing or different. */
  open(stored: string): string;
}

const PLAIN = 'plain:';

/**
 * Builds a PasswordBox from GSLB_SECRET_KEY (undefined or empty: no encryption). Throws
 * CONFIG_INVALID when the key is set but is not 64 hex characters, so a typo is caught at startup
 * rather than at first use.
 */
export function createPasswordBox(hexKey: string | undefined): PasswordBox {
  const box = hexKey ? new SecretBox(hexKey) : undefined;
  return {
    encrypting: box !== undefined,
    seal: (plain) => (box ? box.seal(plain, 'smtp-password') : `${PLAIN}${plain}`),
    open(stored) {
      if (stored.startsWith(PLAIN)) return stored.slice(PLAIN.length);
      if (!box) throw new Error('the stored SMTP password is encrypted and GSLB_SECRET_KEY is not set');
      try {
        return box.open(stored, 'smtp-password');
      } catch (cause) {
        throw new Error('the stored SMTP password cannot be decrypted: GSLB_SECRET_KEY differs from the key it was stored with', { cause });
      }
    },
  };
}
