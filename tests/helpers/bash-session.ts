import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childEnv } from './proc.js';

/**
 * The shell block that follows `<!-- test: NAME -->` in a Markdown text (the next ```sh fence),
 * exactly as written. Throws when the marker or its fence is missing, so a renamed block fails the
 * test instead of silently testing nothing.
 */
export function markedBlock(markdown: string, name: string): string {
  const marker = `<!-- test: ${name} -->`;
  const at = markdown.indexOf(marker);
  if (at < 0) throw new Error(`no "${marker}" in the document`);
  const m = /^\s*```sh\n([\s\S]*?)\n```/.exec(markdown.slice(at + marker.length));
  if (!m) throw new Error(`"${marker}" is not followed by a \`\`\`sh block`);
  return m[1]!;
}

/** Reads the marked block NAME of the Markdown file FILE, relative to ROOT (see {@link markedBlock}). */
export function docBlock(root: string, file: string, name: string): string {
  return markedBlock(readFileSync(join(root, file), 'utf8'), name);
}

/** Reads README.md's marked block NAME (see {@link markedBlock}). */
export function readmeBlock(root: string, name: string): string {
  return docBlock(root, 'README.md', name);
}

/**
 * One long-lived `bash` (no profile, no rc files) that runs blocks one after another, as a person
 * pasting them into one terminal would: variables, `cd` and background jobs (`kill %1`) carry over.
 * Each block is written to a file and sourced with stdin from /dev/null (a command that reads
 * stdin cannot swallow the next block); its end is a marker line with the block's exit status.
 * bash gets its own process group, so `close` can end whatever the blocks left running.
 */
export class BashSession {
  private readonly proc: ChildProcess;
  private readonly dir = mkdtempSync(join(tmpdir(), 'gslbd-bash-'));
  private out = '';
  private err = '';
  private n = 0;

  constructor(cwd: string, env: NodeJS.ProcessEnv) {
    this.proc = spawn('bash', ['--noprofile', '--norc'], { cwd, env: childEnv(env), stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    this.proc.stdout!.on('data', (d: Buffer) => { this.out += d.toString(); });
    this.proc.stderr!.on('data', (d: Buffer) => { this.err += d.toString(); });
  }

  /** Everything the session wrote to stdout so far (commands and background jobs alike). */
  get stdout(): string { return this.out; }
  /** Everything written to stderr so far. */
  get stderr(): string { return this.err; }

  /**
   * Runs `script` in the session. Resolves with the block's exit status (that of its last command)
   * and the stdout written while it ran; rejects when it does not end within `timeoutMs`.
   */
  async run(script: string, timeoutMs: number): Promise<{ status: number; output: string }> {
    const id = ++this.n;
    const file = join(this.dir, `block-${id}.sh`);
    writeFileSync(file, `${script}\n`);
    const from = this.out.length;
    const done = new RegExp(`__BLOCK_${id}_DONE__ (\\d+)\\n`);
    this.proc.stdin!.write(`source ${file} </dev/null; echo "__BLOCK_${id}_DONE__ $?"\n`);
    const end = Date.now() + timeoutMs;
    for (;;) {
      const m = done.exec(this.out.slice(from));
      if (m) return { status: Number(m[1]), output: this.out.slice(from, from + m.index) };
      if (this.proc.exitCode !== null) throw new Error(`bash exited (${this.proc.exitCode}) during block ${id}\nstdout:\n${this.out.slice(from)}\nstderr:\n${this.err}`);
      if (Date.now() > end) throw new Error(`block ${id} did not finish within ${timeoutMs} ms\nstdout:\n${this.out.slice(from)}\nstderr:\n${this.err}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Ends the shell: `exit`, then SIGKILL to its process group if it is still there after 10 s. */
  async close(): Promise<void> {
    const p = this.proc;
    if (p.exitCode === null && p.signalCode === null) {
      const exited = new Promise<void>((resolve) => p.once('exit', () => resolve()));
      p.stdin!.end('exit\n');
      const timer = setTimeout(() => { try { process.kill(-p.pid!, 'SIGKILL'); } catch { /* already gone */ } }, 10_000);
      await exited;
      clearTimeout(timer);
    }
    // jobs a failed test left behind share bash's process group
    try { process.kill(-p.pid!, 'SIGKILL'); } catch { /* none left */ }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
