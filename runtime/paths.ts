import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root (the folder with package.json), found from this file in source or in dist/. */
export const PACKAGE_ROOT: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('package root not found');
    dir = up;
  }
  return dir;
})();

/** Reads a JSON schema from schemas/ by file name. */
export function loadSchema<T = Record<string, unknown>>(name: string): T {
  return JSON.parse(readFileSync(join(PACKAGE_ROOT, 'schemas', name), 'utf8')) as T;
}
