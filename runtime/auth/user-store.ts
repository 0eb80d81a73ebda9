import { randomUUID } from 'node:crypto';
import type { RowWriter } from '../app.js';
import { writeUnique, type UniqueWriter } from '../ports/unique-names.js';
import type { Role } from '../ports/permissions.js';
import { DEFAULT_TENANT, type GenericRow } from '../../core/model/types.js';
import { tableIndex } from '../../core/snapshot/table-index.js';
import { rowsOf, getRow, type Snapshot } from '../../core/snapshot/snapshot.js';
import { planCreate, planDelete, planUpdate } from '../../core/plan/delta.js';

/**
 * A user row (kind `user`, origin `api`), as stored in `resources` and the Snapshot and replicated
 * by config sync. Secrets stay inside (`publicUser` strips them; the kind declares them secret,
 * so plan renderings redact them). Times in ms.
 */
export interface UserRecord extends GenericRow {
  kind: 'user';
  email: string;
  displayName: string;
  role: Role;
  passwordHash: string | null;
  authProvider: 'password' | 'oidc';
  /** encrypted TOTP secret once verified (see runtime/crypto/secret-box.ts) */
  totpSecret: string | null;
  /** encrypted secret between /auth/totp/setup and /auth/totp/verify */
  totpPending: string | null;
  /** the last TOTP time step accepted (a code of this step or older is refused) */
  totpLastStep: number;
  createdAt: number;
  updatedAt: number;
}

/** The user object the API returns: never a hash or a secret. */
export interface PublicUser {
  userId: string;
  email: string;
  displayName: string;
  role: Role;
  tenantId: string;
  auth_provider: 'password' | 'oidc';
  totpEnabled: boolean;
  createdAt: number;
  updatedAt: number;
}

/** Strips secrets; timestamps in Unix seconds. */
export function publicUser(u: UserRecord): PublicUser {
  return {
    userId: u.id, email: u.email, displayName: u.displayName, role: u.role, tenantId: u.tenantId,
    auth_provider: u.authProvider, totpEnabled: u.totpSecret !== null,
    createdAt: Math.floor(u.createdAt / 1000), updatedAt: Math.floor(u.updatedAt / 1000),
  };
}

/** Fields needed to create a user. */
export interface NewUser {
  tenantId?: string;
  email: string;
  displayName?: string;
  role: Role;
  passwordHash: string | null;
  authProvider?: 'password' | 'oidc';
}

/** What the auth stores need of the core: the snapshot to read and the one write path. */

/** Fields `update` may change. */
export type UserPatch = Partial<Pick<UserRecord, 'displayName' | 'role' | 'passwordHash' | 'totpSecret' | 'totpPending' | 'totpLastStep'>>;

const normalEmail = (email: string) => email.trim().toLowerCase();

// Two nodes of a cluster may create one address at the same moment (uniqueness is checked
// locally): the first row in storage order wins, the same on every node.
const byEmailIndex = new WeakMap<object, Map<string, UserRecord>>();
const emailIndex = (s: Snapshot) => tableIndex<UserRecord>(s, 'user', byEmailIndex, (u) => normalEmail(u.email));

/**
 * Users as `user` rows. Reads come from the current Snapshot (`core.holder.current`); writes are
 * one-row plans through `core.apply` (the one write path), so they are committed with the rest of
 * the state and replicated by config sync with the same ids everywhere. Synchronous. E-mail
 * lookups are case-insensitive. Errors: whatever `core.apply` throws (STORE_FAILED, 409).
 */
export class UserStore {
  /** `core.ports`, when given, carries the cluster's reservations of unique names ({@link createReserved}) */
  constructor(private readonly core: RowWriter & { ports?: UniqueWriter['ports'] }, private readonly now: () => number = Date.now) {}

  private get snap(): Snapshot {
    return this.core.holder.current;
  }

  /** Number of users in all tenants. */
  count(): number {
    return rowsOf(this.snap, 'user').size;
  }

  /** Number of users with an active TOTP secret. */
  countTotp(): number {
    let n = 0;
    for (const u of rowsOf<UserRecord>(this.snap, 'user').values()) if (u.totpSecret !== null) n++;
    return n;
  }

  byId(id: string): UserRecord | undefined {
    return getRow<UserRecord>(this.snap, 'user', id);
  }

  byEmail(email: string): UserRecord | undefined {
    return emailIndex(this.snap).get(normalEmail(email));
  }

  /** Users of one tenant, or of all tenants when `tenantId` is null; by creation time, then e-mail. */
  list(tenantId: string | null): UserRecord[] {
    const out: UserRecord[] = [];
    for (const u of rowsOf<UserRecord>(this.snap, 'user').values()) if (tenantId === null || u.tenantId === tenantId) out.push(u);
    return out.sort((a, b) => a.createdAt - b.createdAt || (a.email < b.email ? -1 : a.email > b.email ? 1 : 0));
  }

  private newRow(u: NewUser): UserRecord {
    const t = this.now();
    return {
      kind: 'user', id: randomUUID(), origin: 'api', revision: '', tenantId: u.tenantId ?? DEFAULT_TENANT,
      email: u.email.trim(), displayName: u.displayName ?? '', role: u.role, passwordHash: u.passwordHash,
      authProvider: u.authProvider ?? 'password', totpSecret: null, totpPending: null, totpLastStep: 0, createdAt: t, updatedAt: t,
    };
  }

  /** Creates a user through a one-row plan and returns it. */
  create(u: NewUser): UserRecord {
    const row = this.newRow(u);
    const s = this.core.apply(planCreate(this.snap, row, this.core.apiRevision()));
    return getRow<UserRecord>(s, 'user', row.id)!;
  }

  /**
   * As {@link create}, with the e-mail address checked against every user (409 `a user with e-mail
   * … already exists`) and, in a cluster, reserved cluster-wide first (docs/cluster.md "Unique names").
   */
  async createReserved(u: NewUser): Promise<UserRecord> {
    const row = this.newRow(u);
    const c = this.core;
    const s = await writeUnique({ holder: c.holder, apply: (p) => c.apply(p), apiRevision: () => c.apiRevision(), ports: c.ports ?? {} }, (snap, rev) => planCreate(snap, row, rev));
    return getRow<UserRecord>(s, 'user', row.id)!;
  }

  /**
   * Creates the user only while no user exists (setup, --create-admin); undefined otherwise. The
   * check and the apply run in one turn of the event loop, so two requests cannot both pass.
   */
  createFirst(u: NewUser): UserRecord | undefined {
    return this.count() === 0 ? this.create(u) : undefined;
  }

  /** Updates the given fields (undefined ones are left alone) and `updatedAt`; undefined when the user is gone. */
  update(id: string, patch: UserPatch): UserRecord | undefined {
    const cur = this.byId(id);
    if (!cur) return undefined;
    const next: UserRecord = { ...cur, updatedAt: this.now() };
    for (const [k, v] of Object.entries(patch)) if (v !== undefined) Object.assign(next, { [k]: v });
    const s = this.core.apply(planUpdate(this.snap, cur, next, this.core.apiRevision()));
    return getRow<UserRecord>(s, 'user', id);
  }

  /**
   * Records `step` as the last TOTP step used, only when it is newer than the stored one (one plan,
   * replicated, so a code used on one node is refused on the others once the plan arrives).
   * Returns false when the step was already used (a replayed code) or the user is gone.
   */
  useTotpStep(id: string, step: number): boolean {
    const cur = this.byId(id);
    if (!cur || cur.totpLastStep >= step) return false;
    this.core.apply(planUpdate(this.snap, cur, { ...cur, totpLastStep: step }, this.core.apiRevision()));
    return true;
  }

  /** Deletes the user; false when there is none. */
  delete(id: string): boolean {
    const cur = this.byId(id);
    if (!cur) return false;
    this.core.apply(planDelete(this.snap, cur, this.core.apiRevision()));
    return true;
  }
}
