import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { connect, createServer } from 'node:net';
import { WAIT_CEILING_MS, waitUntil } from './wait.js';

/** A free TCP port on 127.0.0.1 (bound then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** True when something accepts a TCP connection on 127.0.0.1:`port`. */
export function tcpListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
}

/** True when a UDP socket holds 127.0.0.1:`port` (binding it fails). */
export function udpBound(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createSocket('udp4');
    s.once('error', () => { s.close(); resolve(true); });
    s.bind(port, '127.0.0.1', () => s.close(() => resolve(false)));
  });
}

/** Runs a TypeScript entry point (`runtime/main.ts`, `cli/main.ts`) the way the bin shims do. */
export function spawnEntry(entry: 'gslbd' | 'gslbctl', args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
  const file = entry === 'gslbd' ? 'runtime/main.ts' : 'cli/main.ts';
  return spawn(process.execPath, ['--import', 'tsx', file, ...args], { env: childEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
}

/**
 * The environment for a child process started by a test: the test runner's own variables removed
 * (a child that inherits NODE_TEST_CONTEXT reports to the runner instead of running normally).
 */
export function childEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  delete env.NODE_TEST_CONTEXT;
  return env;
}

/**
 * Runs an entry point to completion: exit code, stdout, stderr. Killed after `timeoutMs` (a hang's
 * ceiling: starting Node with tsx on a loaded machine takes seconds), and then stderr says so.
 */
export function runEntry(entry: 'gslbd' | 'gslbctl', args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 3 * WAIT_CEILING_MS): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawnEntry(entry, args, env);
    let stdout = '';
    let stderr = '';
    p.stdout!.on('data', (d) => { stdout += d; });
    p.stderr!.on('data', (d) => { stderr += d; });
    let killed = false;
    const t = setTimeout(() => { killed = true; p.kill('SIGKILL'); }, timeoutMs);
    p.on('exit', (code) => {
      clearTimeout(t);
      resolve({ code, stdout, stderr: killed ? `${stderr}\n(${entry} ${args.join(' ')}: killed after ${timeoutMs} ms)` : stderr });
    });
  });
}

/**
 * Polls `fn` until it returns a truthy value, at most `timeoutMs` (raised to WAIT_CEILING_MS, 30 s:
 * tests/helpers/wait.ts). A timeout names `what` and the last value `fn` returned or the last error
 * it threw, and adds what `describe` returns.
 */
export async function waitFor<T>(fn: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = WAIT_CEILING_MS, stepMs = 50, what = 'a condition', describe?: () => unknown): Promise<T> {
  return waitUntil(what, fn, { timeoutMs, everyMs: stepMs, ...(describe ? { describe } : {}) });
}
