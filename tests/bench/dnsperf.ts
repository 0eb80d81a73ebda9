/**
 * dnsperf (Debian) as the benchmarks drive it: one bounded run against 127.0.0.1, its summary
 * parsed, and with `verbose` every query's latency (dnsperf -v) for percentiles and the maximum.
 */
import { spawn } from 'node:child_process';

/** One dnsperf run: rate, latency (p99 and max only with `verbose`), and how many queries got no reply. */
export interface PerfResult { qps: number; avgMs: number; p99Ms: number | undefined; maxMs: number; sent: number; completed: number; lost: number }

/**
 * Runs `dnsperf -s 127.0.0.1 -p <port> -d <queryFile> -t 2 <args>` (prefixed by `wrap`, e.g. a
 * taskset pinning) and parses its report. Killed after `killAfterSeconds` in any case.
 */
export function runDnsperf(port: number, queryFile: string, args: string[], o: { verbose: boolean; killAfterSeconds: number; wrap?: (cmd: string[]) => string[] }): Promise<PerfResult> {
  return new Promise((resolve, reject) => {
    const base = ['dnsperf', '-s', '127.0.0.1', '-p', String(port), '-d', queryFile, '-t', '2', ...args, ...(o.verbose ? ['-v'] : [])];
    const cmd = o.wrap ? o.wrap(base) : base;
    const p = spawn(cmd[0]!, cmd.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    const lat: number[] = [];
    let tail = '';
    let partial = '';
    p.stdout.on('data', (c: Buffer) => {
      const text = partial + c.toString();
      const lines = text.split('\n');
      partial = lines.pop()!;
      for (const l of lines) {
        if (o.verbose && l.startsWith('> ')) { const v = Number(l.slice(l.lastIndexOf(' ') + 1)); if (Number.isFinite(v)) lat.push(v * 1000); continue; }
        tail += `${l}\n`;
      }
    });
    p.stderr.on('data', () => {});
    p.on('error', reject);
    const killer = setTimeout(() => p.kill('SIGKILL'), o.killAfterSeconds * 1000);
    p.on('close', () => {
      clearTimeout(killer);
      const num = (re: RegExp) => Number(re.exec(tail)?.[1] ?? NaN);
      lat.sort((a, b) => a - b);
      const sent = num(/Queries sent:\s+(\d+)/);
      if (!Number.isFinite(sent)) return reject(new Error(`dnsperf output not understood:\n${tail}`));
      resolve({
        qps: num(/Queries per second:\s+([\d.]+)/), avgMs: num(/Average Latency \(s\):\s+([\d.]+)/) * 1000,
        p99Ms: lat.length ? lat[Math.min(lat.length - 1, Math.floor(lat.length * 0.99))] : undefined,
        maxMs: num(/Average Latency \(s\):\s+[\d.]+ \(min [\d.]+, max ([\d.]+)\)/) * 1000,
        sent, completed: num(/Queries completed:\s+(\d+)/), lost: num(/Queries lost:\s+(\d+)/),
      });
    });
  });
}
