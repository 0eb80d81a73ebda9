/**
 * What the benchmarks share about their server processes: CPU pinning with taskset (when the
 * machine has it), an IPC question and answer, and a bounded stop.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';

/** True when `taskset` works here; without it nothing is pinned. */
export const hasTaskset = spawnSync('taskset', ['-c', '0', 'true']).status === 0;

/** `cmd` prefixed to run on one CPU, when taskset is available. */
export const pin = (cpu: number, cmd: string[]): string[] => (hasTaskset ? ['taskset', '-c', String(cpu), ...cmd] : cmd);

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
