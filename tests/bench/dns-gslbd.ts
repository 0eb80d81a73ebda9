/**
 * The gslbd server of the DNS benchmarks (`bench:dns`, `bench:dnssec`): a port free for UDP and TCP,
 * the daemon started pinned to CPU 1 (tests/bench/dns-server.ts), and a bounded wait for its first
 * answer.
 */
import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { createSocket } from 'node:dgram';
import { mkdirSync } from 'node:fs';
import { hasTaskset, pin } from './child.js';

/** A port free for both UDP and TCP on 127.0.0.1. */
export async function freeDnsPort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((r) => { const s = createServer(); s.listen(0, '127.0.0.1', () => { const p = (s.address() as { port: number }).port; s.close(() => r(p)); }); });
    const ok = await new Promise<boolean>((r) => { const u = createSocket('udp4'); u.once('error', () => r(false)); u.bind(port, '127.0.0.1', () => u.close(() => r(true))); });
    if (ok) return port;
  }
}

/**
 * Starts tests/bench/dns-server.ts on `port` with its files in `dir`, pinned to `cpus` (default
 * CPU 1), with `dns.workers` = `workers`; `dnsFile` names a JSON file of extra `dns` settings
 * (e.g. `dnssec`). Resolves once the daemon is ready (60 s at most).
 */
export async function startGslbd(port: number, dir: string, opts: { dnsFile?: string; workers?: number; cpus?: number | string } = {}): Promise<ChildProcess> {
  mkdirSync(dir, { recursive: true });
  const args = ['--expose-gc', '--import', 'tsx', 'tests/bench/dns-server.ts', String(port), dir, String(opts.workers ?? 0), ...(opts.dnsFile ? [opts.dnsFile] : [])];
  const cmd = pin(opts.cpus ?? 1, [process.execPath, ...args]);
  // fork cannot prefix taskset; spawn with an IPC channel instead.
  const child = hasTaskset
    ? spawn(cmd[0]!, cmd.slice(1), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    : fork(args[3]!, args.slice(4), { execArgv: args.slice(0, 3) });
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('gslbd did not start in 60 s')), 60_000);
    child.once('message', (m: { udpPath?: string }) => { clearTimeout(t); console.log(`gslbd udp path: ${m.udpPath ?? 'unknown'}`); resolve(); });
    child.once('exit', (c) => reject(new Error(`gslbd exited ${c}`)));
  });
  return child;
}

/** Waits (20 s at most) until `www.bench.test A` is answered on `port`. */
export async function waitAnswer(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const r = spawnSync('dig', ['@127.0.0.1', '-p', String(port), '+time=1', '+tries=1', '+short', 'www.bench.test', 'A'], { encoding: 'utf8' });
    if (r.status === 0 && /127\.0\.0\./.test(r.stdout)) return;
    await new Promise((res) => setTimeout(res, 200));
  }
  throw new Error(`no answer on port ${port}`);
}
