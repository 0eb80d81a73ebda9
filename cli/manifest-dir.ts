import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { SourceFile } from '../gitops/source/git-source.js';

/**
 * Every `*.yaml` file under `dir` (recursively, hidden folders skipped), with paths relative to
 * `dir` and `/` separators, sorted — the same view the controller has of a commit's pathPrefix.
 * Errors: throws, naming `dir` and why (no such directory, not a directory, no permission), when
 * `dir` is not a readable directory.
 */
export function readManifestDir(dir: string): SourceFile[] {
  let isDir: boolean;
  try {
    isDir = statSync(dir).isDirectory();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(code === 'ENOENT' ? `${dir}: no such directory` : `${dir}: cannot read (${code ?? (err as Error).message})`);
  }
  if (!isDir) throw new Error(`${dir}: not a directory (give the folder that holds the manifests)`);
  const out: SourceFile[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      if (name.startsWith('.')) continue;
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.yaml')) out.push({ path: relative(dir, p).split(sep).join('/'), text: readFileSync(p, 'utf8') });
    }
  };
  walk(dir);
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
