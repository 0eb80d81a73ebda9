import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createUser } from '@nats-io/nkeys';
import { connectOptions } from '../../../runtime/cluster/connect-options.js';
import { validateConfigObject } from '../../../runtime/config/load.js';

const cfg = (nats: Record<string, unknown>) => validateConfigObject({ node: { id: 'n1' }, state: { nats: { servers: ['nats://127.0.0.1:4222'], ...nats } } });

test('connection options follow state.nats: TLS files, user/password, nkey seed, credentials', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-nats-opts-'));
  try {
    const plain = connectOptions(cfg({}));
    assert.deepEqual(plain.servers, ['nats://127.0.0.1:4222']);
    assert.equal(plain.maxReconnectAttempts, -1);
    assert.equal(plain.tls, undefined);
    assert.equal(plain.authenticator, undefined);
    const up = connectOptions(cfg({ auth: { user: 'u', password: 'p' }, tls: { caFile: '/ca.pem', certFile: '/c.pem', keyFile: '/k.pem' } }));
    assert.equal(up.user, 'u');
    assert.equal(up.pass, 'p');
    assert.deepEqual(up.tls, { caFile: '/ca.pem', certFile: '/c.pem', keyFile: '/k.pem' });
    const seed = join(dir, 'seed.nk');
    writeFileSync(seed, `${new TextDecoder().decode(createUser().getSeed())}\n`);
    assert.equal(typeof connectOptions(cfg({ auth: { nkeySeedFile: seed } })).authenticator, 'function');
    assert.throws(() => connectOptions(cfg({ auth: { credsFile: join(dir, 'missing.creds') } })), /ENOENT/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
