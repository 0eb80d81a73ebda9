import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort } from './proc.js';
import { shown, START_CEILING_MS, WAIT_CEILING_MS, waitUntil } from './wait.js';

/** One `nats-server -js` process this test started. */
export interface NatsServer {
  name: string;
  port: number;
  url: string;
  monitorPort: number;
  clusterPort: number | undefined;
  storeDir: string;
  proc: ChildProcess | undefined;
  /** kills the process (SIGKILL by default) and waits for it to exit */
  kill: (signal?: NodeJS.Signals) => Promise<void>;
  /** starts it again on the same ports and store */
  restart: () => Promise<void>;
}

const started = new Set<NatsServer>();

async function waitHealthy(s: NatsServer, timeoutMs = WAIT_CEILING_MS): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (s.proc && (s.proc.exitCode !== null || s.proc.signalCode !== null)) {
      throw new Error(`nats-server ${s.name} exited (${s.proc.exitCode ?? s.proc.signalCode}): ${readLog(s).slice(-400)}`);
    }
    try {
      const res = await fetch(`http://127.0.0.1:${s.monitorPort}/healthz?js-enabled-only=true`);
      if (res.ok) return;
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nats-server ${s.name} (monitor port ${s.monitorPort}) not healthy after ${timeoutMs} ms: ${readLog(s).slice(-400)}`);
}

function readLog(s: NatsServer): string {
  try { return readFileSync(join(s.storeDir, 'nats.log'), 'utf8'); } catch { return ''; }
}

function launch(s: NatsServer, routes: string[], extra: string[] = []): void {
  const args = [...extra, '-js', '-a', '127.0.0.1', '-p', String(s.port), '-m', String(s.monitorPort), '--store_dir', s.storeDir, '-n', s.name];
  if (s.clusterPort !== undefined) args.push('--cluster_name', 'gslbtest', '--cluster', `nats://127.0.0.1:${s.clusterPort}`, '--routes', routes.join(','));
  const log = openSync(join(s.storeDir, 'nats.log'), 'a');
  s.proc = spawn('nats-server', args, { stdio: ['ignore', log, log] });
  closeSync(log);
}

/**
 * Starts one `nats-server -js` on free loopback ports with a temp store. Only processes started
 * here are ever killed (by PID, in `stopAllNats`).
 */
export async function startNats(name = 'n1', extraArgs: string[] = []): Promise<NatsServer> {
  return (await startNatsCluster(1, name, extraArgs))[0]!;
}

/**
 * Starts `size` nats-server processes; with size 3 they form a cluster (routes between them) and
 * JetStream uses replicas 3. Resolves when every server reports JetStream healthy.
 */
export async function startNatsCluster(size: number, prefix = 'n', extraArgs: string[] = []): Promise<NatsServer[]> {
  // a free port can be taken by another process between the probe and the bind: try fresh ports
  for (let attempt = 1; ; attempt++) {
    const servers = await launchCluster(size, prefix, extraArgs);
    try {
      await Promise.all(servers.map((s) => waitHealthy(s, 20_000)));
      return servers;
    } catch (err) {
      for (const s of servers) { await s.kill('SIGKILL'); rmSync(s.storeDir, { recursive: true, force: true }); started.delete(s); }
      if (attempt >= 3) throw err;
    }
  }
}

async function launchCluster(size: number, prefix: string, extraArgs: string[]): Promise<NatsServer[]> {
  const servers: NatsServer[] = [];
  for (let i = 0; i < size; i++) {
    const s: NatsServer = {
      name: size === 1 ? prefix : `${prefix}${i + 1}`, port: await freePort(), monitorPort: await freePort(),
      clusterPort: size > 1 ? await freePort() : undefined, storeDir: mkdtempSync(join(tmpdir(), 'gslbd-nats-')), proc: undefined, url: '',
      kill: async () => {}, restart: async () => {},
    };
    s.url = `nats://127.0.0.1:${s.port}`;
    servers.push(s);
  }
  const routes = servers.filter((s) => s.clusterPort !== undefined).map((s) => `nats://127.0.0.1:${s.clusterPort}`);
  for (const s of servers) {
    const peers = routes.filter((r) => !r.endsWith(`:${s.clusterPort}`));
    s.kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
      const p = s.proc;
      if (!p || p.exitCode !== null || p.signalCode !== null) return;
      const exited = new Promise<void>((r) => p.once('exit', () => r()));
      p.kill(signal);
      await exited;
    };
    s.restart = async () => { launch(s, peers, extraArgs); await waitHealthy(s, 20_000); };
    started.add(s);
    launch(s, peers, extraArgs);
  }
  return servers;
}

/** Kills every nats-server this process started and removes their stores. Safe to call twice. */
export async function stopAllNats(): Promise<void> {
  for (const s of [...started]) {
    await s.kill('SIGKILL');
    rmSync(s.storeDir, { recursive: true, force: true });
    started.delete(s);
  }
}

/** One gslbd process a test spawned, with its own database, API and DNS ports. */
export interface GslbdNode {
  id: string;
  dir: string;
  configPath: string;
  apiPort: number;
  dnsPort: number;
  url: string;
  proc: ChildProcess | undefined;
  /** SIGKILL (default) or SIGTERM; waits for exit */
  kill: (signal?: NodeJS.Signals) => Promise<void>;
  /** starts the process again with the same config and database */
  restart: () => Promise<void>;
}

const nodes = new Set<GslbdNode>();

/**
 * Spawns `node --import tsx runtime/main.ts --config <tmpfile>` with a config built from `state`
 * (merged into `state`) and `extra` top-level keys (an object merged one level into the default
 * of its key: `{dns: {domain}}` keeps the node's DNS port). Resolves when the API answers (any
 * status: the test may use a system key).
 */
export async function spawnGslbd(id: string, state: Record<string, unknown>, extra: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}): Promise<GslbdNode> {
  const { writeFileSync } = await import('node:fs');
  const dir = mkdtempSync(join(tmpdir(), `gslbd-${id}-`));
  const apiPort = await freePort();
  const dnsPort = await freePort();
  const config: Record<string, unknown> = {
    cluster: { id: 'test-cluster' },
    node: { id },
    database: { path: join(dir, 'gslbd.db') },
    api: { enabled: true, listenAddr: '127.0.0.1', port: apiPort },
    dns: { listenAddr: '127.0.0.1', port: dnsPort },
    logging: { format: 'json', level: 'info' },
    state,
  };
  for (const [k, v] of Object.entries(extra)) {
    const base = config[k];
    config[k] = base && typeof base === 'object' && v && typeof v === 'object' && !Array.isArray(v) ? { ...base, ...v } : v;
  }
  const configPath = join(dir, 'config.yaml');
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  const n: GslbdNode = {
    id, dir, configPath, apiPort, dnsPort, url: `http://127.0.0.1:${apiPort}`, proc: undefined,
    kill: async (signal: NodeJS.Signals = 'SIGKILL') => {
      const p = n.proc;
      if (!p || p.exitCode !== null || p.signalCode !== null) return;
      const exited = new Promise<void>((r) => p.once('exit', () => r()));
      p.kill(signal);
      await exited;
    },
    restart: async () => {
      const out = openSync(join(dir, 'gslbd.log'), 'a');
      n.proc = spawn(process.execPath, ['--import', 'tsx', 'runtime/main.ts', '--config', configPath], {
        stdio: ['ignore', out, out], env: { ...process.env, GSLB_API_KEY: '', ...env },
      });
      const until = Date.now() + START_CEILING_MS;
      while (Date.now() < until) {
        if (n.proc.exitCode !== null) throw new Error(`gslbd ${id} exited with ${n.proc.exitCode}; see ${join(dir, 'gslbd.log')}`);
        try { await fetch(`${n.url}/api/v1/cluster`); return; } catch { /* not listening yet */ }
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`gslbd ${id} did not answer within ${START_CEILING_MS / 1000} s`);
    },
  };
  nodes.add(n);
  await n.restart();
  return n;
}

/** Kills every gslbd this process spawned and removes their directories. */
export async function stopAllGslbd(): Promise<void> {
  for (const n of [...nodes]) {
    await n.kill('SIGKILL');
    // GSLBD_KEEP_LOGS=1 keeps each node's directory (config, database, gslbd.log) for debugging
    if (process.env.GSLBD_KEEP_LOGS) process.stderr.write(`kept ${n.dir}\n`);
    else rmSync(n.dir, { recursive: true, force: true });
    nodes.delete(n);
  }
}

/**
 * The last warnings and errors each gslbd this process spawned has logged (pino levels 40 and up),
 * a few per node and each cut short: what a timed-out wait adds to its message, so a failure on a
 * loaded CI machine says what the nodes saw.
 */
export function nodeLogDigest(perNode = 6): string {
  const out: string[] = [];
  for (const n of nodes) {
    let lines: string[];
    try { lines = readFileSync(join(n.dir, 'gslbd.log'), 'utf8').split('\n'); } catch { continue; }
    const loud = lines.filter((l) => { try { return (JSON.parse(l) as { level?: number }).level! >= 40; } catch { return false; } });
    if (loud.length) out.push(`${n.id}:`, ...loud.slice(-perNode).map((l) => `  ${l.length > 400 ? `${l.slice(0, 400)}…` : l}`));
  }
  return out.length ? `\nwarnings and errors the nodes logged last:\n${out.join('\n')}` : '';
}

/**
 * Polls `fn` every `everyMs` until it returns a truthy value, at most `timeoutMs` (raised to
 * WAIT_CEILING_MS, 30 s: tests/helpers/wait.ts). A timeout names `what`, the last value or error
 * seen, what `describe` returns and nodeLogDigest().
 */
export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = WAIT_CEILING_MS, everyMs = 20, describe?: () => unknown): Promise<T> {
  return waitUntil(what, fn, {
    timeoutMs, everyMs,
    describe: async () => `${describe ? shown(await describe(), 4000) : ''}${nodeLogDigest()}`,
  });
}

/** GET/POST JSON against a node. */
export async function call(url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}${path}`, {
    method, headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try { json = text ? JSON.parse(text) : undefined; } catch { json = text; }
  return { status: res.status, body: json as any };
}
