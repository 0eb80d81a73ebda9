import { inputError, unreachable } from './exit-codes.js';

/**
 * A small client for the daemon's REST API used by gslbctl: base URL from `--server` (or
 * GSLB_SERVER, default http://127.0.0.1:8080), bearer token from GSLB_API_KEY. Errors: a CliError
 * with the API's `{error}` message and the HTTP status: exit 3 when the daemon cannot be reached,
 * times out or answers 5xx, exit 2 when it refuses the request (4xx: the key, the arguments).
 */
export class ApiClient {
  readonly base: string;
  constructor(server: string | undefined, private readonly key: string | undefined = process.env.GSLB_API_KEY) {
    this.base = (server ?? process.env.GSLB_SERVER ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
  }

  async call<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.key) headers.authorization = `Bearer ${this.key}`;
    if (!URL.canParse(this.base) || !/^https?:$/.test(new URL(this.base).protocol)) throw inputError(`--server ${this.base}: not an http or https URL`);
    let res: Response;
    try {
      res = await fetch(`${this.base}/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(120_000) });
    } catch (err) {
      throw unreachable(`cannot reach ${this.base}: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}`);
    }
    const text = await res.text();
    let json: unknown;
    try { json = text ? JSON.parse(text) : undefined; } catch { json = text; }
    if (!res.ok) {
      const msg = json && typeof json === 'object' && 'error' in json ? String((json as { error: unknown }).error) : text.slice(0, 200);
      const line = `${method} ${path}: HTTP ${res.status}: ${msg}`;
      throw res.status >= 500 ? unreachable(line) : inputError(line);
    }
    return json as T;
  }
}
