import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WsTokens, WS_TOKEN_TTL_S } from '../../../runtime/ws/token.js';

test('ws tokens: round trip, expiry at expiresAt, other keys refused', async () => {
  let now = 1_700_000_000_500;
  const tokens = new WsTokens(() => now);
  const { token, expiresAt } = await tokens.issue({ tenantId: 't1', actor: 'ab12' });
  assert.equal(expiresAt, (Math.floor(now / 1000) + WS_TOKEN_TTL_S) * 1000);
  assert.deepEqual(await tokens.verify(token), { tenantId: 't1', actor: 'ab12' });
  now = expiresAt - 1;
  assert.ok(await tokens.verify(token));
  now = expiresAt;
  assert.equal(await tokens.verify(token), undefined, 'expired at expiresAt');
  now = 1_700_000_000_500;
  assert.equal(await new WsTokens(() => now).verify(token), undefined, 'another process key');
  assert.equal(await tokens.verify(`${token}x`), undefined);
  const sup = await tokens.issue({ tenantId: null, actor: 'dev' });
  assert.deepEqual(await tokens.verify(sup.token), { tenantId: null, actor: 'dev' });
});
