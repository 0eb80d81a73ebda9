import type { LoadedCommit, ReconcileDeps } from './context.js';
import { transient } from '../errors.js';
import { readManifestFiles, type SourceFile } from '../source/git-source.js';
import { loadManifests, type Manifest } from '../load/index.js';
import { parseCacheKey } from '../load/manifest.js';
import { sortProblems, validateManifests } from '../validate/validate.js';
import { validationEnv } from '../validate/names.js';
import type { DesiredRow } from '../../core/plan/types.js';
import type { RoutingCase } from '../load/index.js';
import { DEFAULT_TENANT } from '../../core/model/types.js';
import type { PlanJob } from '../offload/offload.js';
import { invalid, offloadError } from './failures.js';

/**
 * The load step's result: the desired rows of a commit already validated, the parsed manifests,
 * or the offload worker's job that loaded them (and goes on to validate and plan).
 */
export type Loaded = { desired: DesiredRow[]; cases: RoutingCase[] } | { manifests: Manifest[] } | { job: PlanJob };

/** What the load step needs: the config, the repository, the offload worker and the parse cache. */
export type LoadDeps = Pick<ReconcileDeps, 'source' | 'offload' | 'parseCache'> & { core: Pick<ReconcileDeps['core'], 'config' | 'env'> };

/** The desired rows of `sha` when it is the commit remembered, under the keyring as it is now (`stamp`), and was planned here. */
export function rememberedRows(loaded: LoadedCommit | undefined, sha: string, stamp: string): { desired: DesiredRow[]; cases: RoutingCase[] } | undefined {
  return loaded?.desired && loaded.sha === sha && loaded.stamp === stamp ? { desired: loaded.desired, cases: loaded.cases } : undefined;
}

/**
 * load: every *.yaml under pathPrefix, parsed into manifests (syntax errors with file:line). With
 * the offload worker (docs/gitops.md "Off the DNS thread") the worker reads and parses, and goes
 * on to validate and plan the commit; this step waits for its load phase. Otherwise here, and the
 * last loaded commit is not read again (`remembered`: its rows, `rememberedRows`). Errors: transient FetchFailed (the tree cannot be read);
 * stalled ManifestsInvalid with the syntax and schema problems together (validation runs on what
 * did parse).
 */
export async function loadStep(r: LoadDeps, sha: string, remembered: { desired: DesiredRow[]; cases: RoutingCase[] } | undefined): Promise<Loaded> {
  if (r.offload) {
    const job = startJob(r, sha);
    const out = await job.loaded.promise.catch((err: unknown) => { throw offloadError(err); });
    if (out.problems) throw invalid(out.problems);
    return { job };
  }
  if (remembered) return remembered;
  let files: SourceFile[];
  try {
    files = await readManifestFiles(r.source.gitdir, sha, r.core.config.gitops.pathPrefix, (p, oid) => r.parseCache.has(parseCacheKey(p, oid)));
  } catch (err) {
    throw transient('FetchFailed', `reading the tree of ${sha}: ${(err as Error).message}`, { cause: err });
  }
  const { manifests, problems } = loadManifests(files, r.parseCache);
  if (problems.length) {
    const more = validateManifests(manifests, validationEnv(r.core.config, r.core.env)).problems;
    throw invalid(sortProblems([...problems, ...more]));
  }
  return { manifests };
}

/** Asks the offload worker to load, validate and plan `sha` (again: a re-plan of a loaded commit skips loading). */
export function startJob(r: Pick<LoadDeps, 'offload' | 'source'> & { core: Pick<ReconcileDeps['core'], 'config'> }, sha: string): PlanJob {
  return r.offload!.plan({ sha, gitdir: r.source.gitdir, pathPrefix: r.core.config.gitops.pathPrefix, safety: r.core.config.gitops.safety, tenantId: DEFAULT_TENANT });
}
