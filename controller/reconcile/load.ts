import type { Reconciler } from '../reconcile.js';
import { transient } from '../errors.js';
import { readManifestFiles, type SourceFile } from '../source/git-source.js';
import { loadManifests, type Manifest } from '../load/index.js';
import { parseCacheKey } from '../load/manifest.js';
import { sortProblems, validateManifests } from '../validate/validate.js';
import { validationEnv } from '../validate/names.js';
import type { DesiredRow } from '../plan/types.js';
import type { RoutingCase } from '../load/index.js';
import { invalid } from './validate.js';

/** The load step's result: the desired rows of a commit already validated, or the parsed manifests. */
export type Loaded = { desired: DesiredRow[]; cases: RoutingCase[] } | { manifests: Manifest[] };

/**
 * load: every *.yaml under pathPrefix, parsed into manifests (syntax errors with file:line). The
 * last loaded commit is not read again. Errors: transient FetchFailed (the tree cannot be read);
 * stalled ManifestsInvalid with the syntax and schema problems together (validation runs on what
 * did parse).
 */
export async function loadStep(r: Reconciler, sha: string): Promise<Loaded> {
  const cached = r.loaded;
  if (cached && cached.sha === sha && cached.stamp === r.keyringStamp()) return { desired: cached.desired, cases: cached.cases };
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
