import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { parsePushEvent, verifyWebhookSignature } from '../../../gitops/webhook.js';

const body = Buffer.from(JSON.stringify({ ref: 'refs/heads/main', after: 'a'.repeat(40) }));
const mac = createHmac('sha256', 's3cret').update(body).digest('hex');

test('webhook HMAC forms (table)', () => {
  const rows: { name: string; headers: Record<string, string>; body?: Buffer; want: boolean }[] = [
    { name: 'GitHub X-Hub-Signature-256', headers: { 'x-hub-signature-256': `sha256=${mac}` }, want: true },
    { name: 'Gitea X-Gitea-Signature', headers: { 'x-gitea-signature': mac }, want: true },
    { name: 'Forgejo X-Forgejo-Signature', headers: { 'x-forgejo-signature': mac }, want: true },
    { name: 'GitHub form without sha256= prefix', headers: { 'x-hub-signature-256': mac }, want: false },
    { name: 'no signature', headers: {}, want: false },
    { name: 'wrong secret', headers: { 'x-gitea-signature': createHmac('sha256', 'other').update(body).digest('hex') }, want: false },
    { name: 'body changed after signing', headers: { 'x-gitea-signature': mac }, body: Buffer.from(`${body.toString()} `), want: false },
    { name: 'not hex', headers: { 'x-gitea-signature': 'z'.repeat(64) }, want: false },
  ];
  for (const r of rows) assert.equal(verifyWebhookSignature(r.body ?? body, 's3cret', r.headers), r.want, r.name);
});

test('push events: JSON and form-encoded payloads', () => {
  assert.deepEqual(parsePushEvent(body, 'application/json'), { ref: 'refs/heads/main', after: 'a'.repeat(40) });
  const form = Buffer.from(`payload=${encodeURIComponent(body.toString())}`);
  assert.deepEqual(parsePushEvent(form, 'application/x-www-form-urlencoded'), { ref: 'refs/heads/main', after: 'a'.repeat(40) });
  assert.equal(parsePushEvent(Buffer.from('{"zen":"ping"}'), 'application/json'), undefined);
  assert.equal(parsePushEvent(Buffer.from('not json'), 'application/json'), undefined);
});
