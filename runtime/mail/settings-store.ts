import type { RowWriter } from '../app.js';
import { conflict } from '../errors.js';
import type { GenericRow } from '../../core/model/types.js';
import { getRow, rowsOf } from '../../core/snapshot/snapshot.js';
import { planCreate, planDelete, planUpdate } from '../../core/plan/delta.js';
import { MAIL_KIND, mailRowId, type MailOwner } from './owner.js';
import type { PasswordBox } from './password-box.js';
import type { MailSettings } from './settings.js';

/**
 * A mail settings row (kind `mailsettings`, origin `api`): `mail:system` for the server-wide
 * settings, `mail:<tenantId>` for a tenant's own. Stored in `resources`, held in the Snapshot and
 * replicated by config sync like every row. `password` is a PasswordBox value (`v2:…`, older
 * rows `gcm1:…`, or `plain:…` without GSLB_SECRET_KEY), never a bare password; the kind declares it
 * secret, so plan renderings show `[redacted]`. Times in ms.
 */
export interface MailSettingsRow extends GenericRow {
  kind: 'mailsettings';
  host: string;
  port: number;
  from: string;
  to: string[];
  username: string;
  password: string | null;
  tls: boolean;
  startTls: boolean;
  enabled: boolean;
  updatedAt: number;
}

/** What `load` returns: the settings, plus why the stored password could not be read, if so. */
export interface StoredMailSettings {
  settings: MailSettings;
  /** set when a password is stored but cannot be opened (key missing or changed) */
  passwordError?: string;
}

/** What the store needs of the core: the Snapshot to read and the one write path. */

/**
 * Mail settings as rows. Reads come from the current Snapshot; writes are one-row plans through
 * `core.apply`. The password is sealed with the PasswordBox before it is written and opened when
 * read (once per row version). Errors: 409 when a tenant's row id is taken by a row of another
 * owner, and whatever `core.apply` throws.
 */
export class MailSettingsStore {
  private readonly opened = new WeakMap<MailSettingsRow, StoredMailSettings>();

  constructor(
    private readonly core: RowWriter,
    private readonly box: PasswordBox,
    /** the tenant recorded on the server-wide row (`tenancy.operatorTenant`) */
    private readonly operatorTenant: string,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The owner's row, or undefined. A row at a tenant's id that records another tenant is not that
   * tenant's: a tenant named `system` must never read or write the server-wide row.
   */
  row(owner: MailOwner): MailSettingsRow | undefined {
    const r = getRow<MailSettingsRow>(this.core.holder.current, MAIL_KIND, mailRowId(owner));
    if (!r || (owner.scope === 'tenant' && r.tenantId !== owner.tenantId)) return undefined;
    return r;
  }

  /** Every settings row (start-up checks). */
  rows(): MailSettingsRow[] {
    return [...rowsOf<MailSettingsRow>(this.core.holder.current, MAIL_KIND).values()];
  }

  /** The owner's settings with the password opened, or undefined when none are stored. */
  load(owner: MailOwner): StoredMailSettings | undefined {
    const r = this.row(owner);
    if (!r) return undefined;
    let out = this.opened.get(r);
    if (!out) {
      out = this.open(r);
      this.opened.set(r, out);
    }
    return out;
  }

  private open(r: MailSettingsRow): StoredMailSettings {
    let password = '';
    let passwordError: string | undefined;
    if (r.password) {
      try { password = this.box.open(r.password); } catch (err) { passwordError = (err as Error).message; }
    }
    const settings: MailSettings = {
      host: r.host, port: r.port, from: r.from, to: [...r.to], username: r.username, password,
      tls: r.tls, startTls: r.startTls, enabled: r.enabled,
    };
    return passwordError ? { settings, passwordError } : { settings };
  }

  /**
   * Creates or replaces the owner's row through a one-row plan. `keepSealedPassword` keeps the
   * stored password bytes as they are (the request omitted the password and the stored one cannot
   * be opened on this node).
   */
  save(owner: MailOwner, s: MailSettings, keepSealedPassword = false): void {
    const id = mailRowId(owner);
    const cur = this.row(owner);
    if (!cur && getRow(this.core.holder.current, MAIL_KIND, id)) {
      throw conflict(`mail settings ${id} belong to another owner: tenant "${owner.scope === 'tenant' ? owner.tenantId : ''}" cannot have its own mail settings`);
    }
    const sealed = keepSealedPassword ? cur?.password ?? null : s.password ? this.box.seal(s.password) : null;
    const row: MailSettingsRow = {
      kind: 'mailsettings', id, origin: 'api', revision: '', tenantId: owner.scope === 'system' ? this.operatorTenant : owner.tenantId,
      host: s.host, port: s.port, from: s.from, to: [...s.to], username: s.username, password: sealed,
      tls: s.tls, startTls: s.startTls, enabled: s.enabled, updatedAt: this.now(),
    };
    const snap = this.core.holder.current;
    const rev = this.core.apiRevision();
    this.core.apply(cur ? planUpdate(snap, cur, row, rev) : planCreate(snap, row, rev));
  }

  /** Deletes the owner's row through a plan; true when a row existed. */
  clear(owner: MailOwner): boolean {
    const cur = this.row(owner);
    if (!cur) return false;
    this.core.apply(planDelete(this.core.holder.current, cur, this.core.apiRevision()));
    return true;
  }

  /** The stored (sealed) password of the owner's row (tests check that it is not the clear password). */
  rawPassword(owner: MailOwner): string | null {
    return this.row(owner)?.password ?? null;
  }
}
