import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Logger } from '../../log/logger.js';
import { resolveScriptPath, type ScriptPolicy } from '../../config/script-policy.js';
import type { Checker, CheckResult, CheckTarget } from '../types.js';
import { describeError, elapsedMs } from '../types.js';

/** The detail of a script check on a node whose `health.allowScripts` is false. */
export const SCRIPTS_OFF_DETAIL = 'script checks are disabled on this node';

/**
 * The whole environment of a script: a fixed PATH and locale plus the two variables of the spec.
 * Deliberately not the daemon's environment (gslb-api.md §2 says "inherits"): that holds
 * GSLB_API_KEY, GSLB_SECRET_KEY, the license and NATS credentials (docs/health.md).
 */
export function scriptEnv(target: CheckTarget): NodeJS.ProcessEnv {
  return { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', SVC_HC_IP: target.ip, SVC_HC_PORT: String(target.port) };
}

/** Runs an executable in `cwd` with {@link scriptEnv}; resolves with its exit description. */
function runScript(file: string, cwd: string, target: CheckTarget, signal: AbortSignal): Promise<CheckResult> {
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
    const child = spawn(file, [], { env: scriptEnv(target), cwd, stdio: 'ignore', detached: true });
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

/** Runs `scriptContent` from a private temporary file (mode 0700) in its own directory, then removes it. */
async function runContent(content: string, target: CheckTarget, signal: AbortSignal): Promise<CheckResult> {
  let dir: string | undefined;
  try {
    dir = await mkdtemp(join(tmpdir(), 'gslbd-hc-'));
    const file = join(dir, 'check');
    await writeFile(file, content, { mode: 0o700 });
    let r = await runScript(file, dir, target, signal);
    // ETXTBSY: another thread forked while the file was open for writing; one retry is enough.
    if (!r.ok && r.detail.includes('ETXTBSY') && !signal.aborted) r = await runScript(file, dir, target, signal);
    return r;
  } catch (err) {
    return { ok: false, rttMs: 0, detail: describeError(err) };
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true }).catch(() => {});
  }
}

/**
 * Script check: healthy when the executable exits with code 0. The environment is only
 * {@link scriptEnv}; the working directory is the script's own (the temp directory for
 * `scriptContent`). The process group is killed with SIGKILL when the caller's signal aborts (the
 * check's timeoutMs). `scriptContent` takes precedence over `scriptPath`.
 *
 * Defence in depth: a check that reaches this node although `policy` forbids it (replicated from
 * another node, or stored before scripts were disabled) never runs. With scripts disabled the
 * result is unhealthy with {@link SCRIPTS_OFF_DETAIL}; a `scriptPath` that does not resolve inside
 * `policy.dirs` is unhealthy with the reason. Each refusal is logged once per check at warn. The
 * resolved real path is what runs, so a symlink swapped after the check is not followed twice.
 */
export function createScriptChecker(log: Logger, policy: ScriptPolicy): Checker {
  const warned = new Set<string>();
  const refuse = (target: CheckTarget, detail: string): CheckResult => {
    const id = `${target.checkId}|${target.checkKey}|${detail}`;
    if (!warned.has(id)) {
      warned.add(id);
      log.warn({ pool: target.poolId, check: target.checkId, detail }, 'script health check refused on this node');
    }
    return { ok: false, rttMs: 0, detail };
  };
  return {
    async check(target: CheckTarget, signal: AbortSignal): Promise<CheckResult> {
      const c = target.check;
      if (!policy.allow) return refuse(target, SCRIPTS_OFF_DETAIL);
      if (c.scriptContent) return runContent(c.scriptContent, target, signal);
      if (!c.scriptPath) return { ok: false, rttMs: 0, detail: 'no scriptPath or scriptContent' };
      const v = resolveScriptPath(c.scriptPath, policy.dirs);
      if (!v.ok) return refuse(target, v.status === 403 ? 'scriptPath is outside health.scriptDirs on this node' : v.reason);
      return runScript(v.real, dirname(v.real), target, signal);
    },
  };
}
