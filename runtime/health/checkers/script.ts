import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Checker, CheckResult, CheckTarget } from '../types.js';
import { describeError, elapsedMs } from '../types.js';

/** Runs an executable with the health-check environment; resolves with its exit description. */
function runScript(file: string, target: CheckTarget, signal: AbortSignal): Promise<CheckResult> {
  return new Promise((resolve) => {
    const start = performance.now();
    let done = false;
    const finish = (r: CheckResult) => {
      if (done) return;
      done = true;
      signal.removeEventListener('abort', onAbort);
      resolve(r);
    };
    // Own process group, so a script that started children (`sleep`, a pipeline) is killed whole.
    const child = spawn(file, [], {
      env: { ...process.env, SVC_HC_IP: target.ip, SVC_HC_PORT: String(target.port) },
      stdio: 'ignore',
      detached: true,
    });
    const kill = () => {
      try { if (child.pid) process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
    };
    const onAbort = () => {
      kill();
      finish({ ok: false, rttMs: 0, detail: 'timeout: script killed' });
    };
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    child.once('error', (err) => finish({ ok: false, rttMs: 0, detail: `spawn ${describeError(err)}` }));
    child.once('exit', (code, sig) => {
      kill(); // children left behind by an exited script must not outlive the probe
      if (code === 0) finish({ ok: true, rttMs: elapsedMs(start), detail: 'exit 0' });
      else finish({ ok: false, rttMs: elapsedMs(start), detail: sig ? `killed by ${sig}` : `exit ${code}` });
    });
  });
}

/**
 * Script check: healthy when the executable exits with code 0. The environment is the daemon's plus
 * `SVC_HC_IP` and `SVC_HC_PORT`; the process group is killed with SIGKILL when the caller's signal
 * aborts (the check's timeoutMs). With `scriptContent` the body is written to a private temporary
 * file (mode 0700) for this probe, run, and removed; it takes precedence over `scriptPath`.
 */
export const scriptChecker: Checker = {
  async check(target: CheckTarget, signal: AbortSignal): Promise<CheckResult> {
    const c = target.check;
    if (!c.scriptContent) {
      if (!c.scriptPath) return { ok: false, rttMs: 0, detail: 'no scriptPath or scriptContent' };
      return runScript(c.scriptPath, target, signal);
    }
    let dir: string | undefined;
    try {
      dir = await mkdtemp(join(tmpdir(), 'gslbd-hc-'));
      const file = join(dir, 'check');
      await writeFile(file, c.scriptContent, { mode: 0o700 });
      let r = await runScript(file, target, signal);
      // ETXTBSY: another thread forked while the file was open for writing; one retry is enough.
      if (!r.ok && r.detail.includes('ETXTBSY') && !signal.aborted) r = await runScript(file, target, signal);
      return r;
    } catch (err) {
      return { ok: false, rttMs: 0, detail: describeError(err) };
    } finally {
      if (dir) await rm(dir, { recursive: true, force: true }).catch(() => {});
    }
  },
};
