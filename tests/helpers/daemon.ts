import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { validateConfigObject } from '../../runtime/config/load.js';
import { startDaemon, type Daemon } from '../../runtime/daemon.js';
import type { Config } from '../../runtime/config/types.js';
import '../../runtime/parts-all.js';
import { PARTS, type Part } from '../../runtime/parts.js';
import type { PortSeed } from '../../runtime/ports/parts.js';
import { createOpenApiCheck, openApiError, type OpenApiCheck } from './openapi-check.js';

/** Collects every log line a test daemon writes, so tests can assert on logs (and on secrets absent). */
export class LogCapture extends Writable {
  readonly lines: Record<string, unknown>[] = [];
  override _write(chunk: Buffer, _enc: string, cb: () => void): void {
    for (const l of chunk.toString().split('\n')) if (l) this.lines.push(JSON.parse(l) as Record<string, unknown>);
    cb();
  }
  text(): string {
    return this.lines.map((l) => JSON.stringify(l)).join('\n');
  }
}

export interface TestDaemon extends Daemon {
  url: string;
  logs: LogCapture;
  dir: string;
  /** the response check (tests/helpers/openapi-check.ts): what it saw so far */
  openapi: OpenApiCheck;
  /** closes the daemon and removes its files; throws when a response did not match the OpenAPI document */
  stop: () => Promise<void>;
}

/** Test-only options: parts started after the response check and before the daemon's own, and a `core.ports` seed (e.g. `demo`). */
export interface TestDaemonOptions {
  parts?: Part[];
  ports?: PortSeed;
}

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> | T[K] : T[K] };

/**
 * Starts gslbd in-process on loopback with ports 0, a temp SQLite file and captured JSON logs.
 * `overrides` are merged over the defaults before validation, so they pass the real checks.
 * Every /api/v1 response is checked against the daemon's OpenAPI document (openapi-check.ts);
 * `stop()` throws listing the responses that did not match.
 */
export async function startTestDaemon(overrides: DeepPartial<Config> & Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}, opts: TestDaemonOptions = {}): Promise<TestDaemon> {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-test-'));
  const defaults: Record<string, unknown> = {
    node: { id: 'test-node' },
    database: { path: join(dir, 'gslbd.db') },
    // on-demand backups (POST /system/backup) land here, never in /var/lib/gslbd
    backup: { dir: join(dir, 'backups') },
    api: { enabled: true, listenAddr: '127.0.0.1', port: 0 },
    // one DNS worker thread answers UDP (the main thread none): as many threads as `auto` would start on one core
    dns: { listenAddr: '127.0.0.1', port: 0, workers: 1 },
    logging: { format: 'json', level: 'debug' },
  };
  const raw: Record<string, unknown> = { ...defaults };
  // one level of merging: `{ api: { bodyLimit } }` keeps the default api.port 0
  for (const [k, v] of Object.entries(overrides)) {
    const base = defaults[k];
    raw[k] = base && typeof base === 'object' && v && typeof v === 'object' && !Array.isArray(v) ? { ...base, ...v } : v;
  }
  // The schema requires ports 1..65535 (gslb-config-auth.md §2); tests listen on port 0, so a
  // port 0 is validated as 1 and put back afterwards.
  const zeroPorts: [Record<string, unknown>, string][] = [];
  for (const v of Object.values(raw)) {
    if (!v || typeof v !== 'object' || Array.isArray(v)) continue;
    const o = v as Record<string, unknown>;
    for (const k of ['port', 'listenPort']) if (o[k] === 0) { zeroPorts.push([o, k]); o[k] = 1; }
  }
  const config = validateConfigObject(raw);
  for (const [o, k] of zeroPorts) o[k] = 0;
  const logs = new LogCapture();
  const log = pino({ level: 'debug' }, logs);
  const openapi = createOpenApiCheck();
  const daemon = await startDaemon(config, { log, env, parts: [openapi.part, ...(opts.parts ?? []), ...PARTS], ports: opts.ports });
  const url = daemon.apiAddress ? `http://127.0.0.1:${daemon.apiAddress.port}` : '';
  const stop = async () => {
    await daemon.close();
    rmSync(dir, { recursive: true, force: true });
    const err = openApiError(openapi);
    if (err) throw err;
  };
  return { ...daemon, url, logs, dir, openapi, stop };
}

/** fetch + JSON helper: returns status, parsed body (or text) and headers. */
export async function api(url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try { json = text ? JSON.parse(text) : undefined; } catch { json = text; }
  return { status: res.status, body: json as any, headers: res.headers };
}
