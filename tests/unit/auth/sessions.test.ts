import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { MemorySessionStore } from '../../../runtime/ports/sessions.js';
import { SessionService } from '../../../runtime/auth/sessions.js';
import { UserStore } from '../../../runtime/auth/user-store.js';
import { authCore } from './auth-core.js';

function setup(extend: boolean) {
  let now = 1_000_000_000;
  const clock = () => now;
  const core = authCore();
  const users = new UserStore(core, clock);
  const store = new MemorySessionStore(clock);
  const svc = new SessionService(() => store, users, 60_000, extend, clock);
  const user = users.create({ email: 'u@x.test', role: 'operator', passwordHash: null });
  return { svc, store, users, user, advance: (ms: number) => { now += ms; }, core };
}

test('sessions are stored under the SHA-256 hex of the token only', async () => {
  const { svc, store, user } = setup(true);
  const { token, expiresAt } = await svc.create(user);
  assert.equal(expiresAt, 1_000_060_000);
  assert.equal(await store.get(token), undefined, 'not under the raw token');
  const rec = await store.get(createHash('sha256').update(token).digest('hex'));
  assert.equal(rec?.userId, user.id);
});

test('sliding window: each use moves the expiry; without extend it does not', async () => {
  for (const extend of [true, false]) {
    const { svc, user, advance } = setup(extend);
    const { token } = await svc.create(user);
    advance(50_000);
    assert.ok(await svc.resolve(token), 'valid before ttl');
    advance(50_000); // 100 s after creation, 50 s after last use
    assert.equal(Boolean(await svc.resolve(token)), extend, `extend=${extend}`);
  }
});

test('revoke, deleted users and role changes apply at once', async () => {
  const { svc, users, user } = setup(true);
  const a = await svc.create(user);
  const b = await svc.create(user);
  users.update(user.id, { role: 'viewer' });
  assert.equal((await svc.resolve(a.token))?.user.role, 'viewer');
  await svc.revoke(a.token);
  assert.equal(await svc.resolve(a.token), undefined);
  assert.ok(await svc.resolve(b.token));
  users.delete(user.id);
  assert.equal(await svc.resolve(b.token), undefined);
});
