import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { migrate } from '../../../runtime/store/db.js';
import { MIGRATIONS } from '../../../runtime/store/migrations/index.js';
import { ResourceStore } from '../../../core/store/resources.js';
import { emptySnapshot, nextSnapshot } from '../../../core/snapshot/snapshot.js';
import { EventBus } from '../../../core/events/bus.js';
import { SnapshotHolder, applyPlan } from '../../../core/apply/apply.js';
import { planToJson, renderPlanText } from '../../../core/plan/render.js';
import type { Plan } from '../../../core/plan/types.js';
import { createPasswordBox } from '../../../runtime/mail/password-box.js';
import { MailSettingsStore, type MailSettingsRow } from '../../../runtime/mail/settings-store.js';
import { SYSTEM_MAIL, mailOwnerOf } from '../../../runtime/mail/owner.js';
import type { MailSettings } from '../../../runtime/mail/settings.js';

const KEY = '3c'.repeat(32);
const settings: MailSettings = { host: 'relay.example.test', port: 587, from: 'g@example.test', to: ['ops@example.test'], username: 'u', password: 'row-secret-1', tls: false, startTls: true, enabled: true };

/** A store over `db` with its own one write path; `plans` collects what it applied. */
function storeOver(db: Database.Database, plans: Plan[] = []) {
  const resources = new ResourceStore(db);
  const holder = new SnapshotHolder(nextSnapshot(emptySnapshot(), resources.loadAll().map((row) => ({ op: 'put', row })), '', 0));
  const bus = new EventBus();
  const core = { holder, apply: (p: Plan) => { plans.push(p); return applyPlan({ store: resources, holder, bus }, p); }, apiRevision: () => `api:${randomUUID()}` };
  return { store: new MailSettingsStore(core, createPasswordBox(KEY), 'ops'), holder };
}

test('migration 0007 moves the smtp_settings row into mail:system with its sealed password as is', () => {
  const db = new Database(':memory:');
  for (const m of MIGRATIONS.filter((x) => x.version <= 6)) db.exec(m.sql);
  db.pragma('user_version = 6');
  const sealed = createPasswordBox(KEY).seal('legacy-pass-7');
  db.prepare(`INSERT INTO smtp_settings (id, host, port, from_addr, to_json, username, password, tls, start_tls, enabled, updated_at)
    VALUES (1, 'old.example.test', 2525, 'f@example.test', '["a@example.test","b@example.test"]', 'legacy', ?, 0, 1, 0, 1700000000000)`).run(sealed);
  assert.equal(migrate(db), MIGRATIONS.at(-1)!.version);
  assert.equal(db.prepare("SELECT name FROM sqlite_master WHERE name = 'smtp_settings'").get(), undefined, 'the old table is gone');
  const r = db.prepare("SELECT kind, id, tenant_id, origin, revision, data FROM resources WHERE kind = 'mailsettings'").get() as Record<string, string>;
  assert.deepEqual({ ...r, data: undefined }, { kind: 'mailsettings', id: 'mail:system', tenant_id: 'default', origin: 'api', revision: 'migration', data: undefined });
  assert.deepEqual(JSON.parse(r.data!), {
    id: 'mail:system', kind: 'mailsettings', origin: 'api', revision: 'migration', tenantId: 'default',
    host: 'old.example.test', port: 2525, from: 'f@example.test', to: ['a@example.test', 'b@example.test'], username: 'legacy', password: sealed,
    tls: false, startTls: true, enabled: false, updatedAt: 1700000000000,
  });
  // the copied row is the server-wide one, whatever tenant the migration recorded
  const { store } = storeOver(db);
  assert.equal(store.load(SYSTEM_MAIL)!.settings.password, 'legacy-pass-7');
  assert.equal(store.load(SYSTEM_MAIL)!.settings.enabled, false);
  db.close();
});

test('migration 0007 without a stored row leaves no mail row', () => {
  const db = new Database(':memory:');
  migrate(db);
  assert.equal((db.prepare("SELECT count(*) AS n FROM resources WHERE kind = 'mailsettings'").get() as { n: number }).n, 0);
  db.close();
});

test('rows are written as plans, sealed, and redacted in plan renderings', () => {
  const db = new Database(':memory:');
  migrate(db);
  const plans: Plan[] = [];
  const { store, holder } = storeOver(db, plans);
  const acme = mailOwnerOf('acme', 'ops');
  store.save(SYSTEM_MAIL, settings);
  store.save(acme, { ...settings, host: 'acme-relay.example.test', password: 'acme-secret-2' });
  store.save(acme, { ...settings, host: 'acme-relay.example.test', password: '' });
  assert.deepEqual(plans.map((p) => p.changes.map((c) => `${c.op} ${c.kind} ${c.id}`)), [['create mailsettings mail:system'], ['create mailsettings mail:acme'], ['update mailsettings mail:acme']]);
  const revs = db.prepare("SELECT revision FROM revisions WHERE origin = 'api'").all() as { revision: string }[];
  assert.deepEqual(revs.map((r) => r.revision), plans.map((p) => p.revision), 'one revision per write');
  const sys = holder.current.rows.get('mailsettings')!.get('mail:system') as MailSettingsRow;
  assert.equal(sys.tenantId, 'ops', 'the server-wide row records the operator tenant');
  assert.match(String(sys.password), /^v2:/);
  assert.equal(holder.current.rows.get('mailsettings')!.get('mail:acme')!.tenantId, 'acme');
  for (const p of plans) {
    const text = `${renderPlanText(p)}\n${JSON.stringify(planToJson(p))}`;
    assert.ok(!text.includes('v2:'), 'no sealed password in a rendering');
    assert.ok(!text.includes('secret'), 'no clear password in a rendering');
  }
  assert.match(renderPlanText(plans[0]!), /\[redacted\]/);
  assert.equal(store.load(acme)!.settings.password, '');
  assert.equal(store.clear(acme), true);
  assert.equal(store.load(acme), undefined);
  db.close();
});

test('a tenant named "system" never reads or writes the server-wide row', () => {
  const db = new Database(':memory:');
  migrate(db);
  const { store } = storeOver(db);
  store.save(SYSTEM_MAIL, settings);
  const impostor = mailOwnerOf('system', 'ops');
  assert.deepEqual(impostor, { scope: 'tenant', tenantId: 'system' });
  assert.equal(store.load(impostor), undefined);
  assert.throws(() => store.save(impostor, { ...settings, host: 'evil.example.test' }), /belong to another owner/);
  assert.equal(store.clear(impostor), false);
  assert.equal(store.load(SYSTEM_MAIL)!.settings.host, 'relay.example.test');
  db.close();
});
