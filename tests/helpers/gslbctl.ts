import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');

/**
 * Runs gslbctl in a child process (as an operator would: nothing else writes to its stdout) and
 * returns the exit code and output. Bounded by 60 s.
 */
export async function gslbctl(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const code = "import('./cli/main.ts').then((m) => m.main(process.argv.slice(1))).then((c) => { process.exitCode = c; })";
  try {
    const r = await run(process.execPath, ['--import', 'tsx', '-e', code, ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', ...env }, timeout: 60_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
