import { createHmac } from 'node:crypto';

/**
 * The Standard Webhooks headers of a request (standardwebhooks.com): `webhook-id`,
 * `webhook-timestamp` (seconds) and `webhook-signature` = `v1,<base64 HMAC-SHA256 of
 * "<id>.<timestamp>.<body>">`. A secret of the form `whsec_<base64>` is used as the key bytes
 * it encodes (the format those libraries generate); any other secret is used as its UTF-8 bytes.
 * Without a secret only the id and timestamp are sent. Pure.
 */
export function standardWebhookHeaders(id: string, timestamp: number, body: string, secret: string | undefined): Record<string, string> {
  const headers: Record<string, string> = { 'webhook-id': id, 'webhook-timestamp': String(timestamp) };
  if (secret) {
    const key = secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret, 'utf8');
    headers['webhook-signature'] = `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
  }
  return headers;
}
