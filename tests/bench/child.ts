/**
 * What the benchmarks share about their server processes: CPU pinning with taskset (when the
 * machine has it), an IPC question and answer, and a bounded stop.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** True when `taskset` works here; without it nothing is pinned. */
export const hasTaskset = spawnSync('taskset', ['-c', '0', 'true']).status === 0;

/** `cmd` prefixed to run on one CPU (or a list such as "0,1"), when taskset is available. */
export const pin = (cpu: number | string, cmd: string[]): string[] => (hasTaskset ? ['taskset', '-c', String(cpu), ...cmd] : cmd);

const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU time (user + system, every thread) a process has used so far, in seconds, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  const { user, system } = cpuSplit(pid);
  return user + system;
}

/** User and system CPU seconds of `pid` (every thread) from /proc/<pid>/stat. */
export function cpuSplit(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(f[11]) / CLK_TCK, system: Number(f[12]) / CLK_TCK };
}

/** Sends `{cmd}` to a child over IPC and resolves with its next message. */
export function ask(child: ChildProcess, cmd: string): Promise<Record<string, number>> {
  return new Promise((r) => { child.once('message', (m) => r(m as Record<string, number>)); child.send({ cmd }); });
}

/** Asks a child to stop (`{cmd: 'stop'}`) and waits for its exit; killed after 5 s. */
export function stopChild(child: ChildProcess): Promise<void> {
  return new Promise<void>((r) => {
    const t = setTimeout(() => { child.kill('SIGKILL'); r(); }, 5000);
    child.once('exit', () => { clearTimeout(t); r(); });
    child.send({ cmd: 'stop' });
  });
}
