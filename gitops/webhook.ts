import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Checks a push webhook's HMAC-SHA256 over the raw body: GitHub's `X-Hub-Signature-256: sha256=<hex>`
 * or Gitea/Forgejo's `X-Gitea-Signature: <hex>` (also sent as `X-Forgejo-Signature`). Constant-time
 * comparison. Returns false when no signature header is present.
 */
export function verifyWebhookSignature(body: Buffer, secret: string, headers: Record<string, string | string[] | undefined>): boolean {
  const h = (n: string) => { const v = headers[n]; return Array.isArray(v) ? v[0] : v; };
  let given: string | undefined;
  const gh = h('x-hub-signature-256');
  if (gh) given = gh.startsWith('sha256=') ? gh.slice(7) : undefined;
  else given = h('x-gitea-signature') ?? h('x-forgejo-signature');
  if (!given || !/^[0-9a-fA-F]{64}$/.test(given)) return false;
  const want = createHmac('sha256', secret).update(body).digest();
  return timingSafeEqual(want, Buffer.from(given, 'hex'));
}

/** The fields of a push event this daemon uses: the ref pushed and the new head. */
export interface PushEvent { ref: string; after: string }

/**
 * Reads a push event body: JSON, or a form body whose `payload` field holds the JSON (GitHub's
 * form content type). Returns undefined when there is no `ref`/`after`.
 */
export function parsePushEvent(body: Buffer, contentType: string | undefined): PushEvent | undefined {
  let text = body.toString('utf8');
  if (contentType?.startsWith('application/x-www-form-urlencoded')) text = new URLSearchParams(text).get('payload') ?? '';
  let v: unknown;
  try { v = JSON.parse(text); } catch { return undefined; }
  const o = v as Record<string, unknown> | null;
  if (!o || typeof o.ref !== 'string' || typeof o.after !== 'string') return undefined;
  return { ref: o.ref, after: o.after };
}
