import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { readFile, realpath } from 'node:fs/promises';
import { isAbsolute, join, sep } from 'node:path';

/**
 * A secret given by reference (docs/alerts.md "Secrets"): an environment variable of the daemon or
 * a file. The value is read when an alert is sent, never stored in a row, returned or logged.
 */
export type SecretRef = { env: string } | { file: string };

/** Where references may point, and the environment they are read from. */
export interface SecretPolicy {
  env: NodeJS.ProcessEnv;
  /** `alerts.secretDirs`: absolute folders secret files may live in (empty: no file references) */
  dirs: readonly string[];
  /** `tenancy.operatorTenant`: its targets may use any `GSLB_ALERT_` variable and any secret folder */
  operatorTenant: string;
}

/** Every environment reference starts with this, so no daemon variable (`GSLB_API_KEY`, …) can be named. */
export const SECRET_ENV_PREFIX = 'GSLB_ALERT_';

/** Largest secret file read (bytes). */
const MAX_SECRET_BYTES = 64 * 1024;

/**
 * The environment prefix a tenant's references must use: `GSLB_ALERT_` for the operator tenant,
 * `GSLB_ALERT_<TENANT>__` for any other (upper case, `-` as `_`), followed by a name without
 * double or edge underscores; so a name belongs to at most one tenant.
 */
export function secretEnvPrefix(tenant: string, operatorTenant: string): string {
  return tenant === operatorTenant ? SECRET_ENV_PREFIX : `${SECRET_ENV_PREFIX}${tenant.toUpperCase().replace(/-/g, '_')}__`;
}

/** The folders a tenant's secret files may live in: every secret folder for the operator tenant, `<dir>/<tenant>` for others. */
export function secretDirsFor(tenant: string, policy: Pick<SecretPolicy, 'dirs' | 'operatorTenant'>): string[] {
  return tenant === policy.operatorTenant ? [...policy.dirs] : policy.dirs.map((d) => join(d, tenant));
}

const describeRef = (ref: SecretRef) => ('env' in ref ? `environment variable ${ref.env}` : `file ${ref.file}`);

/**
 * Why `ref` may not be used by a target of `tenant`, or undefined. Checks the name or path rules
 * and, with `present`, that the variable is set and non-empty or the file is a readable regular
 * file inside the tenant's folders (symlinks resolved) on this node. Never reads more than the
 * file's metadata; the message never contains a secret.
 */
export function secretRefProblem(ref: SecretRef, tenant: string, policy: SecretPolicy, present = true): string | undefined {
  if ('env' in ref) {
    const prefix = secretEnvPrefix(tenant, policy.operatorTenant);
    const rest = ref.env.startsWith(prefix) ? ref.env.slice(prefix.length) : undefined;
    if (rest === undefined || !/^[A-Z0-9]+(_[A-Z0-9]+)*$/.test(rest)) return `environment variable ${ref.env} is not allowed: names start with ${prefix} followed by letters, digits and single underscores`;
    if (present && !policy.env[ref.env]) return `environment variable ${ref.env} is not set on this node`;
    return undefined;
  }
  if (!isAbsolute(ref.file)) return `file ${ref.file}: must be an absolute path`;
  const dirs = secretDirsFor(tenant, policy);
  if (dirs.length === 0) return `file ${ref.file}: secret files are not allowed: alerts.secretDirs is empty`;
  if (!present) return inside(ref.file, dirs) ? undefined : `file ${ref.file} is outside the secret folders (${dirs.join(', ')})`;
  let real: string;
  try {
    real = realpathSync(ref.file);
    if (!statSync(real).isFile()) return `file ${ref.file} is not a regular file`;
    accessSync(real, constants.R_OK);
  } catch (err) {
    return `file ${ref.file} cannot be read on this node (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  const realDirs = dirs.map((d) => { try { return realpathSync(d); } catch { return d; } });
  if (!inside(real, realDirs)) return `file ${ref.file} is outside the secret folders (${dirs.join(', ')})`;
  return undefined;
}

function inside(path: string, dirs: readonly string[]): boolean {
  return dirs.some((d) => path.startsWith(d.endsWith(sep) ? d : d + sep));
}

/** A reference that cannot be resolved; the message names the reference, never a value. */
export class SecretRefError extends Error {
  override name = 'SecretRefError';
}

/**
 * Reads the secret `ref` names for a target of `tenant`, at send time (so a rotated variable or
 * file applies to the next alert). One trailing newline of a file is dropped. Throws
 * SecretRefError when the reference is not allowed, unset, unreadable, empty or too large.
 */
export async function resolveSecretRef(ref: SecretRef, tenant: string, policy: SecretPolicy): Promise<string> {
  const problem = secretRefProblem(ref, tenant, policy, false);
  if (problem) throw new SecretRefError(problem);
  if ('env' in ref) {
    const v = policy.env[ref.env];
    if (!v) throw new SecretRefError(`environment variable ${ref.env} is not set on this node`);
    return v;
  }
  let text: string;
  try {
    const real = await realpath(ref.file);
    const dirs = await Promise.all(secretDirsFor(tenant, policy).map((d) => realpath(d).catch(() => d)));
    if (!inside(real, dirs)) throw new SecretRefError(`file ${ref.file} is outside the secret folders`);
    const buf = await readFile(real);
    if (buf.length > MAX_SECRET_BYTES) throw new SecretRefError(`file ${ref.file} is larger than ${MAX_SECRET_BYTES} bytes`);
    text = buf.toString('utf8').replace(/\r?\n$/, '');
  } catch (err) {
    if (err instanceof SecretRefError) throw err;
    throw new SecretRefError(`${describeRef(ref)} cannot be read on this node (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (!text) throw new SecretRefError(`file ${ref.file} is empty`);
  return text;
}
