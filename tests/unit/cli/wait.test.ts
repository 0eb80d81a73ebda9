import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EXIT_UNREACHABLE, waitReady } from '../../../cli/wait.js';
import { main } from '../../../cli/main.js';
import { freePort } from '../../helpers/proc.js';
import { settlesBeforeHang } from '../../helpers/wait.js';

/** A stand-in daemon whose /api/v1/health answers `starting` for the first `startingFor` calls. */
async function fakeDaemon(startingFor: number) {
  let calls = 0;
  const server = createServer((req, res) => {
    if (req.url !== '/api/v1/health') { res.writeHead(404).end(); return; }
    calls++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: calls > startingFor ? 'ok' : 'starting' }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls: () => calls, close: () => new Promise<void>((r) => server.close(() => r())) };
}

test('waitReady: 0 once /health says ok, 1 when it answers but never ok, 3 when nothing answers', async () => {
  const d = await fakeDaemon(3);
  try {
    const ok = await waitReady(d.url, 10_000);
    assert.equal(ok.code, 0);
    assert.equal(d.calls(), 4, '`starting` is not ready');
    const never = await fakeDaemon(Infinity);
    try {
      const r = await waitReady(never.url, 500);
      assert.equal(r.code, 1);
      assert.deepEqual(r.last, { reached: true, ok: false, status: 'starting' });
    } finally { await never.close(); }
  } finally { await d.close(); }
  // nothing answers: the timeout ends the wait (only a wait that ignored it would reach the ceiling)
  const down = await settlesBeforeHang('waitReady on a port nobody listens on', waitReady(`http://127.0.0.1:${await freePort()}`, 600));
  assert.equal(down.code, EXIT_UNREACHABLE);
  assert.equal(down.last.reached, false);
});

test('gslbctl wait: --ready is required and --timeout must be a duration (exit 2)', async () => {
  const err = process.stderr.write.bind(process.stderr);
  let text = '';
  process.stderr.write = ((c: string) => { text += c; return true; }) as typeof process.stderr.write;
  try {
    assert.equal(await main(['wait']), 2);
    assert.equal(await main(['wait', '--ready', '--timeout', 'soon']), 2);
  } finally { process.stderr.write = err; }
  assert.match(text, /--ready/);
  assert.match(text, /--timeout soon: must be a duration/);
});
