import { createHmac } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, request, type Dispatcher } from 'undici';
import { cidrContains, parseCidr, parseIp, type Cidr } from './ip.js';

/**
 * The one outbound HTTP client for user-supplied URLs (DESIGN decision 11): alert webhooks, the
 * incident services, and later form actions. Every request has a deadline, a capped response body,
 * no redirect following, optional HMAC signing of the raw body, optional retries with backoff, and
 * an optional SSRF guard that refuses private, loopback, link-local and metadata addresses.
 */

/** Retry schedule: one delay per retry, so `[2000, 4000, 8000]` means at most four attempts. */
export interface RetryPolicy {
  delaysMs: readonly number[];
  /** injectable for tests; must resolve after `ms` or reject when `signal` aborts */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** stops waiting between attempts (shutdown) */
  signal?: AbortSignal;
  /** decides whether an error is worth another attempt; default: `isRetryable` */
  shouldRetry?: (err: unknown) => boolean;
  /** called before each wait, with the failed attempt number (1-based) and the delay */
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
}

/** An HTTP exchange that did not end in a 2xx, or could not happen at all. */
export class HttpRequestError extends Error {
  /** response status when one arrived */
  readonly status: number | undefined;
  /** true for network errors, timeouts, 408, 429 and 5xx: another attempt may succeed */
  readonly retryable: boolean;
  /** first bytes of the response body, for the log (never the request) */
  readonly responseText: string | undefined;
  constructor(message: string, opts: { status?: number; retryable: boolean; responseText?: string; cause?: unknown }) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.status = opts.status;
    this.retryable = opts.retryable;
    this.responseText = opts.responseText;
  }
}

/** True when another attempt may succeed: `retryable` errors, or anything that is not an HttpRequestError. */
export function isRetryable(err: unknown): boolean {
  return err instanceof HttpRequestError ? err.retryable : true;
}

/** Sleeps `ms`, rejecting early with the signal's reason when it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => { clearTimeout(t); reject(signal!.reason); };
    const t = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs `fn` until it resolves, retrying retryable failures after each delay of the policy.
 * Returns the first success; throws the last error once the delays are used up, at once for a
 * non-retryable error, or the abort reason when `signal` aborts during a wait.
 */
export async function retryWithBackoff<T>(fn: (attempt: number) => Promise<T>, policy: RetryPolicy): Promise<T> {
  const wait = policy.sleep ?? sleep;
  const shouldRetry = policy.shouldRetry ?? isRetryable;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      const delay = policy.delaysMs[attempt - 1];
      if (delay === undefined || !shouldRetry(err) || policy.signal?.aborted) throw err;
      policy.onRetry?.(err, attempt, delay);
      await wait(delay, policy.signal);
    }
  }
}

/** `sha256=<hex>`: the HMAC-SHA256 of the raw body keyed with `secret` (header `X-Svc-Signature`). */
export function signBody(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Ranges the SSRF guard refuses: private, loopback, link-local (cloud metadata), CGNAT, ULA, unspecified, multicast. */
export const BLOCKED_RANGES: readonly Cidr[] = [
  '0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24',
  '192.168.0.0/16', '198.18.0.0/15', '224.0.0.0/4', '240.0.0.0/4',
  '::/128', '::1/128', '64:ff9b::/96', 'fc00::/7', 'fe80::/10', 'ff00::/8',
].map((c) => parseCidr(c)!);

/** True when the SSRF guard refuses this address (IPv4-mapped IPv6 is checked as IPv4), unless it lies in one of `allow`. */
export function isBlockedAddress(ip: string, allow: readonly Cidr[] = []): boolean {
  const parsed = parseIp(ip);
  if (!parsed) return true;
  if (allow.some((c) => cidrContains(c, parsed))) return false;
  return BLOCKED_RANGES.some((c) => cidrContains(c, parsed));
}

/**
 * A `dns.lookup` replacement that fails when any resolved address is refused by the guard. undici
 * connects to the address this returns, so the address checked is the address used: a name that
 * resolves differently a moment later (DNS rebinding) cannot slip past.
 */
function guardedLookup(allow: readonly Cidr[]) {
  return (hostname: string, options: object, cb: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return cb(err, '');
      const list = addresses as LookupAddress[];
      const bad = list.find((a) => isBlockedAddress(a.address, allow));
      if (bad || list.length === 0) {
        // the address stays out of the message: it reaches the tenant who named the host (an
        // alert target's test, a form action's delivery error), and would map internal DNS for them
        const e = Object.assign(new Error(`refused: ${hostname} resolves to a private or reserved address`), { code: 'ESSRFBLOCKED' });
        return cb(e, '');
      }
      if ((options as { all?: boolean }).all) return cb(null, list);
      cb(null, list[0]!.address, list[0]!.family);
    });
  };
}

/** One outbound request. `json` is serialised once; the signature covers exactly the bytes sent. */
export interface HttpRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  headers?: Record<string, string>;
  body?: string;
  json?: unknown;
  /** signs the raw body: header (default `X-Svc-Signature`) = `sha256=<hex HMAC-SHA256>` */
  sign?: { secret: string; header?: string };
  /** per-attempt deadline; default the client's */
  timeoutMs?: number;
  /** retries for this request; default the client's (none) */
  retry?: RetryPolicy;
  /** the caller gives up (shutdown): the request is aborted and not retried */
  signal?: AbortSignal;
}

/** A 2xx answer: status, lower-cased headers and up to `maxResponseBytes` of the body as text. */
export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Options of createHttpClient. */
export interface HttpClientOptions {
  /** per-attempt deadline covering connect, headers and body; default 10 s */
  timeoutMs?: number;
  /** default retry policy; default none */
  retry?: RetryPolicy;
  /** refuse private, loopback, link-local and metadata addresses (form actions); default off */
  ssrfGuard?: boolean;
  /** ranges the guard lets through all the same (an operator's internal targets) */
  ssrfAllow?: readonly Cidr[];
  /** response bytes kept; the rest is discarded; default 64 KiB */
  maxResponseBytes?: number;
  userAgent?: string;
}

/** The client: `send` performs one request (with its retries) and resolves with a 2xx response. */
export interface HttpClient {
  /**
   * Resolves with the 2xx response; rejects with HttpRequestError after the last attempt fails,
   * or at once (not retryable) when `req.signal` aborts.
   */
  send(req: HttpRequest): Promise<HttpResponse>;
  /** Waits for requests in flight, then releases the sockets; calling it again is harmless. */
  close(): Promise<void>;
}

/** Builds an HttpClient on its own undici Agent. */
export function createHttpClient(opts: HttpClientOptions = {}): HttpClient {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const maxBytes = opts.maxResponseBytes ?? 64 * 1024;
  const agent = new Agent({
    connect: { timeout: timeoutMs, ...(opts.ssrfGuard ? { lookup: guardedLookup(opts.ssrfAllow ?? []) } : {}) },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });

  let closing: Promise<void> | undefined;

  async function once(req: HttpRequest, body: string | undefined, headers: Record<string, string>): Promise<HttpResponse> {
    let url: URL;
    try { url = new URL(req.url); } catch (cause) { throw new HttpRequestError(`invalid URL`, { retryable: false, cause }); }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new HttpRequestError(`unsupported URL scheme ${url.protocol}`, { retryable: false });
    const host = url.hostname.replace(/^\[|\]$/g, '');
    // A literal IP never reaches `lookup`, so the guard checks it here.
    if (opts.ssrfGuard && isIP(host) && isBlockedAddress(host, opts.ssrfAllow)) {
      throw new HttpRequestError(`refused: ${host} is a private or reserved address`, { retryable: false });
    }
    if (req.signal?.aborted) throw new HttpRequestError(`request to ${url.host} aborted`, { retryable: false, cause: req.signal.reason });
    const deadline = AbortSignal.timeout(req.timeoutMs ?? timeoutMs);
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method: req.method ?? (body === undefined ? 'GET' : 'POST'),
        headers, body, dispatcher: agent,
        signal: req.signal ? AbortSignal.any([deadline, req.signal]) : deadline,
      });
    } catch (cause) {
      if (req.signal?.aborted) throw new HttpRequestError(`request to ${url.host} aborted`, { retryable: false, cause });
      const code = (cause as { code?: string }).code;
      const blocked = code === 'ESSRFBLOCKED' || (cause as { cause?: { code?: string } }).cause?.code === 'ESSRFBLOCKED';
      const what = (cause as Error).name === 'TimeoutError' ? `timed out after ${req.timeoutMs ?? timeoutMs} ms` : (cause as Error).message;
      throw new HttpRequestError(`request to ${url.host} failed: ${what}`, { retryable: !blocked, cause });
    }
    const text = await readCapped(res.body, maxBytes);
    if (res.statusCode >= 200 && res.statusCode < 300) return { status: res.statusCode, headers: res.headers, body: text };
    const retryable = res.statusCode === 408 || res.statusCode === 429 || res.statusCode >= 500;
    const redirect = res.statusCode >= 300 && res.statusCode < 400 ? ` (redirects are not followed)${await redirectNote(res.headers.location, url)}` : '';
    throw new HttpRequestError(`${url.host} answered ${res.statusCode}${redirect}`, { status: res.statusCode, retryable, responseText: text.slice(0, 512) });
  }

  /**
   * What a redirect pointed at, for the error: `: redirect to <host> refused: …` when the guard
   * would refuse its address (a receiver bouncing a delivery toward loopback or a metadata address
   * is told apart from an ordinary redirect), else `: redirect to <host>`. Only the host is named:
   * a path or query may hold a token.
   */
  async function redirectNote(location: string | string[] | undefined, base: URL): Promise<string> {
    let to: URL;
    try { to = new URL(Array.isArray(location) ? location[0]! : location ?? '', base); } catch { return ''; }
    if (location === undefined || (to.protocol !== 'http:' && to.protocol !== 'https:')) return '';
    if (!opts.ssrfGuard) return `: redirect to ${to.host}`;
    const host = to.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) return isBlockedAddress(host, opts.ssrfAllow) ? `: redirect to ${to.host} refused: ${host} is a private or reserved address` : `: redirect to ${to.host}`;
    // a slow resolver must not hold the failure up: after a second the redirect is named unresolved
    const bad = await new Promise<string | undefined>((resolve) => {
      setTimeout(resolve, 1000, undefined).unref();
      dnsLookup(host, { all: true }, (err, list) => resolve(err ? undefined : list.find((a) => isBlockedAddress(a.address, opts.ssrfAllow ?? []))?.address));
    });
    return bad ? `: redirect to ${to.host} refused: ${host} resolves to a private or reserved address (${bad})` : `: redirect to ${to.host}`;
  }

  return {
    async send(req) {
      const body = req.json !== undefined ? JSON.stringify(req.json) : req.body;
      const headers: Record<string, string> = { 'user-agent': opts.userAgent ?? 'gslbd', ...(req.headers ?? {}) };
      if (req.json !== undefined && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
      if (req.sign) headers[req.sign.header ?? 'X-Svc-Signature'] = signBody(req.sign.secret, body ?? '');
      const policy = req.retry ?? opts.retry;
      if (!policy) return once(req, body, headers);
      // the caller's signal also ends the waits between attempts
      return retryWithBackoff(() => once(req, body, headers), req.signal && !policy.signal ? { ...policy, signal: req.signal } : policy);
    },
    // idempotent: undici throws when an agent is closed twice
    close: () => (closing ??= agent.close()),
  };
}

/** Reads a response body as UTF-8, keeping the first `max` bytes and discarding the rest. */
async function readCapped(body: Dispatcher.ResponseData['body'], max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const b = chunk as Buffer;
      if (size < max) chunks.push(b.subarray(0, max - size));
      size += b.length;
    }
  } catch {
    // a body cut short still leaves the status, which is what callers act on
  }
  return Buffer.concat(chunks).toString('utf8');
}
