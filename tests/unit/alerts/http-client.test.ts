import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCidr } from '../../../runtime/net/ip.js';
import { createHttpClient, HttpRequestError, isBlockedAddress, retryWithBackoff, signBody } from '../../../runtime/net/http-client.js';
import { Recorder } from '../../helpers/recorder.js';
import { settlesBeforeHang, waitUntil } from '../../helpers/wait.js';

test('signBody is HMAC-SHA256 hex (RFC 4231 test case 2)', () => {
  assert.equal(signBody('Jefe', 'what do ya want for nothing?'), 'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
});

test('retryWithBackoff: attempts and waits per failure pattern', async () => {
  const rows: { name: string; fails: number; retryable: boolean; want: { calls: number; waits: number[]; ok: boolean } }[] = [
    { name: 'first try succeeds', fails: 0, retryable: true, want: { calls: 1, waits: [], ok: true } },
    { name: 'fails twice then succeeds', fails: 2, retryable: true, want: { calls: 3, waits: [2000, 4000], ok: true } },
    { name: 'always fails: three attempts, no more', fails: 99, retryable: true, want: { calls: 3, waits: [2000, 4000], ok: false } },
    { name: 'non-retryable: one attempt', fails: 99, retryable: false, want: { calls: 1, waits: [], ok: false } },
  ];
  for (const row of rows) {
    let calls = 0;
    const waits: number[] = [];
    const run = retryWithBackoff(async () => {
      calls++;
      if (calls <= row.fails) throw new HttpRequestError('nope', { retryable: row.retryable, status: 500 });
      return 'ok';
    }, { delaysMs: [2000, 4000], sleep: async (ms) => { waits.push(ms); } });
    const ok = await run.then(() => true, () => false);
    assert.deepEqual({ calls, waits, ok }, row.want, row.name);
  }
});

test('retryWithBackoff stops waiting when the signal aborts', async () => {
  const ac = new AbortController();
  let calls = 0;
  const p = retryWithBackoff(async () => { calls++; throw new Error('down'); }, { delaysMs: [60_000], signal: ac.signal });
  setTimeout(() => ac.abort(new Error('closing')), 20);
  await assert.rejects(p, /closing/);
  assert.equal(calls, 1);
});

test('isBlockedAddress: private, loopback, link-local and metadata ranges', () => {
  const rows: [string, boolean][] = [
    ['127.0.0.1', true], ['10.1.2.3', true], ['172.16.0.1', true], ['192.168.1.1', true], ['169.254.169.254', true],
    ['100.64.0.1', true], ['0.0.0.0', true], ['::1', true], ['fe80::1', true], ['fd00::1', true], ['::ffff:127.0.0.1', true],
    ['::ffff:a9fe:a9fe', true], ['::ffff:7f00:1', true], ['::ffff:808:808', false],
    ['8.8.8.8', false], ['2001:4860:4860::8888', false], ['93.184.216.34', false],
  ];
  for (const [ip, want] of rows) assert.equal(isBlockedAddress(ip), want, ip);
  const allow = [parseCidr('127.0.0.1/32')!];
  assert.equal(isBlockedAddress('127.0.0.1', allow), false, 'an allowed range passes');
  assert.equal(isBlockedAddress('127.0.0.2', allow), true, 'only the allowed range');
});

test('client: posts JSON with signature, retries 5xx, not 4xx', async () => {
  const rec = new Recorder((n, req) => (req.url === '/bad' ? 404 : n <= 2 ? 503 : 200));
  const base = await rec.start();
  const client = createHttpClient({ timeoutMs: 2000 });
  try {
    const res = await client.send({ url: `${base}/hook`, json: { a: 1 }, sign: { secret: 's3' }, retry: { delaysMs: [10, 20] } });
    assert.equal(res.status, 200);
    assert.equal(rec.requests.length, 3);
    const last = rec.requests[2]!;
    assert.equal(last.method, 'POST');
    assert.equal(last.raw, '{"a":1}');
    assert.equal(last.headers['content-type'], 'application/json');
    assert.equal(last.headers['x-svc-signature'], signBody('s3', '{"a":1}'));
    await assert.rejects(client.send({ url: `${base}/bad`, json: {}, retry: { delaysMs: [10, 20] } }),
      (e: unknown) => e instanceof HttpRequestError && e.status === 404 && !e.retryable);
    assert.equal(rec.requests.length, 4, 'a 404 is not retried');
  } finally {
    await client.close();
    await rec.stop();
  }
});

test('client: a receiver that does not answer times out', async () => {
  const { createServer } = await import('node:net');
  const sockets: import('node:net').Socket[] = [];
  const silent = createServer((s) => { sockets.push(s); /* accept and never answer */ });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const port = (silent.address() as { port: number }).port;
  const client = createHttpClient({ timeoutMs: 300 });
  try {
    // ended by the timeout (the message says so), not by anything else
    await assert.rejects(settlesBeforeHang('a request to a silent receiver', client.send({ url: `http://127.0.0.1:${port}/`, json: {} })),
      (e: unknown) => e instanceof HttpRequestError && e.retryable && /timed out after 300 ms/.test(e.message));
  } finally {
    await client.close();
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => silent.close(() => r()));
  }
});

test('client: the caller\'s signal aborts a request in flight at once, without retries, and a closed client does not wait for it', async () => {
  const { createServer } = await import('node:net');
  const sockets: import('node:net').Socket[] = [];
  const silent = createServer((s) => { sockets.push(s); /* accept and never answer */ });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const port = (silent.address() as { port: number }).port;
  // a ten-minute deadline: only the caller's signal can end this request before the ceiling
  const client = createHttpClient({ timeoutMs: 600_000 });
  try {
    const ac = new AbortController();
    const pending = client.send({ url: `http://127.0.0.1:${port}/`, json: {}, signal: ac.signal, retry: { delaysMs: [10, 10, 10] } });
    await waitUntil('the request to reach the receiver', () => sockets.length === 1);
    ac.abort(new Error('shutting down'));
    await assert.rejects(settlesBeforeHang('the aborted request', pending), (e: unknown) => e instanceof HttpRequestError && !e.retryable && /aborted/.test(e.message));
    assert.equal(sockets.length, 1, 'not retried');
    await settlesBeforeHang('close after the abort', client.close());
  } finally {
    await client.close();
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => silent.close(() => r()));
  }
});

test('client: the SSRF guard refuses loopback by literal and by name; off by default', async () => {
  const rec = new Recorder(() => 200);
  const base = await rec.start();
  const port = new URL(base).port;
  const guarded = createHttpClient({ ssrfGuard: true, timeoutMs: 2000 });
  const open = createHttpClient({ timeoutMs: 2000 });
  try {
    await assert.rejects(guarded.send({ url: `${base}/x`, json: {} }), (e: unknown) => e instanceof HttpRequestError && !e.retryable && /private or reserved/.test(e.message));
    await assert.rejects(guarded.send({ url: `http://localhost:${port}/x`, json: {} }), (e: unknown) => e instanceof HttpRequestError && /private or reserved/.test(e.message));
    assert.equal(rec.requests.length, 0, 'nothing reached the loopback receiver');
    await open.send({ url: `${base}/x`, json: {} });
    assert.equal(rec.requests.length, 1);
  } finally {
    await guarded.close();
    await open.close();
    await rec.stop();
  }
});
