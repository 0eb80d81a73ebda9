import { realpathSync } from 'node:fs';
import { isAbsolute, sep } from 'node:path';

/**
 * Who may define a script health check, and which files it may run (docs/health.md "Script checks").
 * One module, used by the REST route, the GitOps validator, the config file's semantic checks and,
 * as defence in depth, the script checker on every node.
 */

/** `health.allowScripts` and `health.scriptDirs` of the daemon's own configuration. */
export interface ScriptPolicy {
  allow: boolean;
  /** absolute directories a `scriptPath` must lie in, after symlinks are resolved */
  dirs: readonly string[];
}

/** The refusal when `health.allowScripts` is false (REST 403, git validation error). */
export const SCRIPTS_DISABLED = 'script health checks are disabled on this server (health.allowScripts)';
/** The refusal for every tenant principal (REST 403), whatever its role. */
export const SCRIPTS_SYSTEM_ONLY = 'script health checks may only be set by the system key or in git';

/** The policy of a `health` config block. */
export function scriptPolicyOf(h: { allowScripts: boolean; scriptDirs: readonly string[] }): ScriptPolicy {
  return { allow: h.allowScripts, dirs: h.scriptDirs };
}

/** Check fields that may carry a script. */
export interface ScriptFields { type: string; scriptPath?: string | undefined; scriptContent?: string | undefined }

/**
 * True when check fields carry a script: `type: script`, or a `scriptPath` / `scriptContent`
 * stored with another type (inert today, but one type change away from running).
 */
export function carriesScript(c: ScriptFields): boolean {
  return c.type === 'script' || Boolean(c.scriptPath) || Boolean(c.scriptContent);
}

/** A refusal: the HTTP status it maps to over REST and the reason, which is also the git problem. */
export interface ScriptRefusal { status: 400 | 403; reason: string }

/** Outcome of resolving a `scriptPath`: the real file and the allowed directory that holds it. */
export type ScriptPathVerdict = { ok: true; real: string } | ({ ok: false } & ScriptRefusal);

function realOrUndefined(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

/**
 * Resolves `path` with realpath (every symlink and `..` followed) and checks that the result lies
 * inside one of `dirs` (each resolved the same way; a directory that does not exist holds nothing).
 * Refusals: 400 when the path is relative or cannot be resolved on this node, 403 when it resolves
 * outside every directory (the message names them). Reads the filesystem; never throws.
 */
export function resolveScriptPath(path: string, dirs: readonly string[]): ScriptPathVerdict {
  if (!isAbsolute(path)) return { ok: false, status: 400, reason: `scriptPath ${JSON.stringify(path)} must be an absolute path` };
  let real: string;
  try {
    real = realpathSync(path);
  } catch (err) {
    const code = (err as { code?: string }).code ?? 'error';
    return { ok: false, status: 400, reason: `scriptPath ${path} cannot be resolved on this node (${code})` };
  }
  for (const d of dirs) {
    const root = realOrUndefined(d);
    if (root === undefined) continue;
    // `root + sep` so /opt/checks does not admit /opt/checks-evil; `/` holds everything.
    if (real === root || real.startsWith(root.endsWith(sep) ? root : root + sep)) return { ok: true, real };
  }
  const allowed = dirs.length ? dirs.join(', ') : 'none configured';
  const via = real === path ? '' : ` (it resolves to ${real})`;
  return { ok: false, status: 403, reason: `scriptPath ${path}${via} is outside the allowed script directories (health.scriptDirs: ${allowed})` };
}

/**
 * Why check fields carrying a script may not be set or run under `policy`, or undefined when they
 * may: scripts disabled (403), or a `scriptPath` that is relative, unresolvable or outside
 * `policy.dirs` (see resolveScriptPath). Fields without a script always pass. Who is asking is
 * the caller's concern (REST: the system key only; git: allowed).
 */
export function scriptRefusal(c: ScriptFields, policy: ScriptPolicy): ScriptRefusal | undefined {
  if (!carriesScript(c)) return undefined;
  if (!policy.allow) return { status: 403, reason: SCRIPTS_DISABLED };
  if (c.scriptPath) {
    const v = resolveScriptPath(c.scriptPath, policy.dirs);
    if (!v.ok) return { status: v.status, reason: v.reason };
  }
  return undefined;
}
