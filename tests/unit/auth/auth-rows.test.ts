import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { UserStore } from '../../../runtime/auth/user-store.js';
import { TenantStore, hashToken, type ApiKeyRow } from '../../../runtime/auth/tenant-store.js';
import { SessionService } from '../../../runtime/auth/sessions.js';
import { MemorySessionStore } from '../../../runtime/ports/sessions.js';
import { migrate } from '../../../runtime/store/db.js';
import { MIGRATIONS } from '../../../runtime/store/migrations/index.js';
import { rebasePlan } from '../../../core/plan/rebase.js';
import { planToJson, renderPlanText, REDACTED } from '../../../core/plan/render.js';
import { planEvents } from '../../../core/apply/events.js';
import { getRow } from '../../../core/snapshot/snapshot.js';
import { authCore, type TestAuthCore } from './auth-core.js';

const HASH = '$2b$10$abcdefghijklmnopqrstuuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ012';
const SEALED = 'v1:aXY:dGFn:c2VhbGVk';

/** Applies every plan `from` made to `to` the way config sync does: rebased, forced. */
function replicate(from: TestAuthCore, to: TestAuthCore, already = 0): number {
  for (const p of from.applied.slice(already)) {
    const r = rebasePlan(p, to.holder.current);
    if (r.changes.length > 0) to.apply(r, { force: true });
  }
  return from.applied.length;
}

test('users are rows: written by plans, read from the snapshot, persisted in resources', () => {
  const core = authCore();
  const users = new UserStore(core, () => 5_000);
  assert.equal(users.count(), 0);
  const u = users.create({ email: ' Ada@Example.test ', role: 'operator', passwordHash: HASH });
  assert.equal(core.applied.length, 1);
  assert.equal(core.applied[0]!.changes[0]!.kind, 'user');
  assert.equal(u.origin, 'api');
  assert.equal(u.tenantId, 'default');
  assert.equal(u.email, 'Ada@Example.test');
  assert.equal(users.byEmail('ada@EXAMPLE.test')?.id, u.id, 'e-mail lookups ignore case and spaces');
  assert.equal(users.byEmail('nobody@example.test'), undefined);
  const stored = core.db.prepare("SELECT data, origin, revision FROM resources WHERE kind = 'user' AND id = ?").get(u.id) as { data: string; origin: string; revision: string };
  assert.equal(stored.origin, 'api');
  assert.equal(stored.revision, core.applied[0]!.revision);
  assert.equal(JSON.parse(stored.data).passwordHash, HASH);

  // a restart loads the same user
  assert.deepEqual(new UserStore(authCore(core.db)).byId(u.id), u);

  const updated = users.update(u.id, { role: 'viewer', displayName: undefined })!;
  assert.equal(updated.role, 'viewer');
  assert.equal(updated.displayName, '', 'undefined fields are left alone');
  assert.equal(users.update('missing', { role: 'viewer' }), undefined);

  // TOTP steps: only a newer step is accepted, and each acceptance is a plan
  const before = core.applied.length;
  assert.equal(users.useTotpStep(u.id, 10), true);
  assert.equal(users.useTotpStep(u.id, 10), false, 'the same step again is a replay');
  assert.equal(users.useTotpStep(u.id, 9), false, 'an older step too');
  assert.equal(core.applied.length, before + 1);

  assert.equal(users.countTotp(), 0);
  users.update(u.id, { totpSecret: SEALED });
  assert.equal(users.countTotp(), 1);
  assert.equal(users.createFirst({ email: 'second@example.test', role: 'tenant_admin', passwordHash: HASH }), undefined, 'createFirst refuses once a user exists');
  assert.equal(users.delete(u.id), true);
  assert.equal(users.delete(u.id), false);
  assert.equal(users.count(), 0);
  assert.equal(users.byEmail('ada@example.test'), undefined, 'the e-mail index follows the snapshot');
});

test('tenants and legacy keys are rows; keys are found by hash only; tenant isolation of keys', () => {
  const core = authCore();
  const tenants = new TenantStore(core, () => 7_000);
  assert.deepEqual(tenants.list(), [{ id: 'default', name: 'default', createdAt: 0 }], 'the default tenant is built in');
  assert.equal(core.store.loadAll().length, 0, 'a new database has no rows');
  assert.equal(tenants.create('default', 'again'), false);
  assert.equal(tenants.create('acme', 'Acme'), true);
  assert.equal(tenants.create('acme', 'again'), false);
  assert.equal(tenants.exists('acme'), true);
  assert.equal(tenants.exists('other'), false);
  assert.deepEqual(tenants.list().map((t) => t.id), ['acme', 'default']);
  assert.equal(getRow(core.holder.current, 'tenant', 'acme')?.origin, 'api');
  const k = tenants.createKey('acme', 'ci');
  assert.match(k.key, /^gslbk_/);
  assert.equal(tenants.tenantOfKey(k.key), 'acme');
  assert.equal(tenants.tenantOfKey(`${k.key}x`), undefined);
  const row = getRow<ApiKeyRow>(core.holder.current, 'apikey', k.id)!;
  assert.equal(row.keyHash, hashToken(k.key));
  assert.ok(!JSON.stringify(row).includes(k.key), 'the raw key is never stored');
  assert.deepEqual(tenants.listKeys('acme'), [{ id: k.id, tenantId: 'acme', name: 'ci', createdAt: 7 }]);
  assert.deepEqual(tenants.listKeys('default'), []);
  assert.equal(tenants.deleteKey('default', k.id), false, "another tenant's key is not found");
  assert.equal(tenants.deleteKey('acme', k.id), true);
  assert.equal(tenants.tenantOfKey(k.key), undefined);
});

test('a user replicated as a plan has the same id on the other node; a session is refused there until it arrives', async () => {
  const a = authCore();
  const c = authCore();
  const sessions = new MemorySessionStore();
  const usersA = new UserStore(a);
  const usersC = new UserStore(c);
  const onC = new SessionService(() => sessions, usersC, 60_000, true);
  const user = usersA.create({ email: 'x@example.test', role: 'tenant_admin', passwordHash: HASH });
  const { token } = await new SessionService(() => sessions, usersA, 60_000, true).create(user);
  // the row has not reached C yet: refused, but the shared session is kept
  assert.equal(await onC.resolve(token), undefined);
  let seen = replicate(a, c);
  assert.deepEqual(usersC.byId(user.id), user);
  assert.equal((await onC.resolve(token))?.user.id, user.id);
  // updates and the TOTP step travel the same way
  usersA.useTotpStep(user.id, 42);
  seen = replicate(a, c, seen);
  assert.equal(usersC.useTotpStep(user.id, 42), false, 'a code used on A is a replay on C');
  usersA.delete(user.id);
  replicate(a, c, seen);
  assert.equal(usersC.byId(user.id), undefined);
});

test('secret fields never leave through plan renderings (gitops diff, gslbctl) or live-feed events', () => {
  const core = authCore();
  const users = new UserStore(core);
  const tenants = new TenantStore(core);
  const u = users.create({ email: 'r@example.test', role: 'operator', passwordHash: HASH });
  users.update(u.id, { totpPending: SEALED });
  users.update(u.id, { totpSecret: SEALED, totpPending: null, passwordHash: `${HASH}2` });
  const key = tenants.createKey('default', 'k');
  users.delete(u.id);
  const keyHash = hashToken(key.key);
  for (const plan of core.applied) {
    const text = renderPlanText(plan);
    const json = JSON.stringify(planToJson(plan));
    for (const secret of [HASH, SEALED, keyHash, key.key]) {
      assert.ok(!text.includes(secret), `plan text of ${plan.changes[0]!.label} shows a secret:\n${text}`);
      assert.ok(!json.includes(secret), `plan JSON of ${plan.changes[0]!.label} shows a secret`);
    }
    assert.deepEqual(planEvents(plan), [], 'no live-feed event for auth rows');
  }
  // a changed secret still shows that it changed, and an unset one stays null
  const change = core.applied[2]!;
  assert.match(renderPlanText(change), new RegExp(`-passwordHash: \\${REDACTED.slice(0, -1)}\\]\\n\\+passwordHash: \\${REDACTED.slice(0, -1)}\\]`));
  const fields = (planToJson(change).changes as { fields: { field: string; before: unknown; after: unknown }[] }[])[0]!.fields;
  assert.deepEqual(fields.find((f) => f.field === 'totpPending'), { field: 'totpPending', before: REDACTED, after: null });
  assert.match(renderPlanText(core.applied[0]!), /\+email: r@example\.test/, 'non-secret fields are shown');
  // labels name the account, never a secret
  for (const p of core.applied) for (const c of p.changes) assert.ok(!/\$2b\$|v1:|[0-9a-f]{64}/.test(c.label), c.label);
});

test('migration 0006 copies users, tenants and keys into resources rows and drops the old tables', () => {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  for (const m of MIGRATIONS.filter((x) => x.version <= 5)) db.exec(m.sql);
  db.pragma('user_version = 5');
  db.prepare("INSERT INTO tenants (id, name, created_at) VALUES ('acme', 'Acme Inc', 2000)").run();
  db.prepare(`INSERT INTO users (id, tenant_id, email, display_name, role, password_hash, auth_provider, totp_secret, totp_pending, totp_last_step, created_at, updated_at)
    VALUES ('u1', 'acme', 'Old@Example.test', 'Old', 'viewer', ?, 'password', ?, NULL, 77, 3000, 4000)`).run(HASH, SEALED);
  db.prepare(`INSERT INTO users (id, tenant_id, email, role, password_hash, auth_provider, created_at, updated_at)
    VALUES ('u2', 'default', 'sso@example.test', 'operator', NULL, 'oidc', 3500, 3500)`).run();
  db.prepare("INSERT INTO tenant_api_keys (id, tenant_id, name, key_hash, created_at) VALUES ('k1', 'acme', 'ci', ?, 5000)").run(hashToken('gslbk_old'));
  assert.equal(migrate(db), MIGRATIONS.at(-1)!.version);

  const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((t) => t.name);
  for (const gone of ['users', 'tenants', 'tenant_api_keys']) assert.ok(!tables.includes(gone), `${gone} dropped`);
  const meta = db.prepare("SELECT kind, id, origin, revision, tenant_id FROM resources WHERE kind IN ('tenant', 'user', 'apikey') ORDER BY rowid").all();
  assert.deepEqual(meta, [
    { kind: 'tenant', id: 'acme', origin: 'api', revision: 'migration', tenant_id: 'acme' },
    { kind: 'user', id: 'u1', origin: 'api', revision: 'migration', tenant_id: 'acme' },
    { kind: 'user', id: 'u2', origin: 'api', revision: 'migration', tenant_id: 'default' },
    { kind: 'apikey', id: 'k1', origin: 'api', revision: 'migration', tenant_id: 'acme' },
  ]);

  const core = authCore(db);
  const users = new UserStore(core);
  assert.deepEqual(users.byEmail('old@example.test'), {
    id: 'u1', kind: 'user', origin: 'api', revision: 'migration', tenantId: 'acme', email: 'Old@Example.test', displayName: 'Old',
    role: 'viewer', passwordHash: HASH, authProvider: 'password', totpSecret: SEALED, totpPending: null, totpLastStep: 77, createdAt: 3000, updatedAt: 4000,
  });
  assert.equal(users.byEmail('sso@example.test')?.authProvider, 'oidc');
  assert.equal(users.countTotp(), 1, 'the start check still sees the TOTP user');
  assert.deepEqual(users.list('acme').map((u) => u.id), ['u1']);
  const tenants = new TenantStore(core);
  assert.deepEqual(tenants.list().map((t) => t.id), ['acme', 'default']);
  assert.equal(tenants.tenantOfKey('gslbk_old'), 'acme');
  // migrated rows are ordinary rows: they can be changed and deleted through plans
  assert.equal(users.update('u1', { role: 'operator' })?.role, 'operator');
  assert.equal(tenants.deleteKey('acme', 'k1'), true);
});
