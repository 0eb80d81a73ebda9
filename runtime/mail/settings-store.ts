import type { Db } from '../store/db.js';
import type { SecretBox } from './secret-box.js';
import type { MailSettings } from './settings.js';

interface Row {
  host: string; port: number; from_addr: string; to_json: string; username: string; password: string | null;
  tls: number; start_tls: number; enabled: number;
}

/** What `load` returns: the settings, plus why the stored password could not be read, if so. */
export interface StoredMailSettings {
  settings: MailSettings;
  /** set when a password is stored but cannot be decrypted (key missing or changed) */
  passwordError?: string;
}

/**
 * The runtime mail settings row in SQLite (migration 0003). The password is sealed with the
 * SecretBox before it is written and opened when read; it is never stored in the clear when a key
 * is set.
 */
export class MailSettingsStore {
  constructor(private readonly db: Db, private readonly box: SecretBox) {}

  /** The stored settings, or undefined when none are stored. */
  load(): StoredMailSettings | undefined {
    const r = this.db.prepare('SELECT * FROM smtp_settings WHERE id = 1').get() as Row | undefined;
    if (!r) return undefined;
    let password = '';
    let passwordError: string | undefined;
    if (r.password) {
      try { password = this.box.open(r.password); } catch (err) { passwordError = (err as Error).message; }
    }
    const settings: MailSettings = {
      host: r.host, port: r.port, from: r.from_addr, to: JSON.parse(r.to_json) as string[], username: r.username, password,
      tls: r.tls === 1, startTls: r.start_tls === 1, enabled: r.enabled === 1,
    };
    return passwordError ? { settings, passwordError } : { settings };
  }

  /**
   * Replaces the stored settings. `keepSealedPassword` keeps the stored password bytes as they
   * are (used when the request omitted the password and the stored one cannot be opened).
   */
  save(s: MailSettings, now: number, keepSealedPassword = false): void {
    const sealed = keepSealedPassword
      ? (this.db.prepare('SELECT password FROM smtp_settings WHERE id = 1').get() as { password: string | null } | undefined)?.password ?? null
      : s.password ? this.box.seal(s.password) : null;
    this.db.prepare(`INSERT INTO smtp_settings (id, host, port, from_addr, to_json, username, password, tls, start_tls, enabled, updated_at)
      VALUES (1, @host, @port, @from, @to, @username, @password, @tls, @startTls, @enabled, @now)
      ON CONFLICT(id) DO UPDATE SET host = excluded.host, port = excluded.port, from_addr = excluded.from_addr, to_json = excluded.to_json,
        username = excluded.username, password = excluded.password, tls = excluded.tls, start_tls = excluded.start_tls,
        enabled = excluded.enabled, updated_at = excluded.updated_at`).run({
      host: s.host, port: s.port, from: s.from, to: JSON.stringify(s.to), username: s.username, password: sealed,
      tls: s.tls ? 1 : 0, startTls: s.startTls ? 1 : 0, enabled: s.enabled ? 1 : 0, now,
    });
  }

  /** Deletes the stored settings; returns true when a row existed. */
  clear(): boolean {
    return this.db.prepare('DELETE FROM smtp_settings WHERE id = 1').run().changes > 0;
  }

  /** The raw stored password column (tests check that it is not the clear password). */
  rawPassword(): string | null {
    return (this.db.prepare('SELECT password FROM smtp_settings WHERE id = 1').get() as { password: string | null } | undefined)?.password ?? null;
  }
}
