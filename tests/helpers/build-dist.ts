import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

function sources(dir: string, out: string[]): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/**
 * Brings `dist/` (what `bin/gslbd.mjs` and `bin/gslbctl.mjs` run) up to date with the sources, as
 * `npm run build` would, for the files whose output is missing or older than their source, without
 * type checking: TypeScript's own per-file emit (`transpileModule`) with the build tsconfig's
 * options (`verbatimModuleSyntax` makes it byte for byte a full build's). Returns the number of
 * files written.
 */
export function refreshDist(root: string): number {
  const cfgPath = join(root, 'tsconfig.build.json');
  const parsed = ts.getParsedCommandLineOfConfigFile(cfgPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(String(d.messageText)); } });
  if (!parsed) throw new Error(`cannot read ${cfgPath}`);
  // package.json says "type": "module", which a single-file emit cannot look up: NodeNext would
  // fall back to CommonJS, so ask for ES modules outright (the same output for these files)
  const options: ts.CompilerOptions = { ...parsed.options, module: ts.ModuleKind.ES2022, moduleResolution: ts.ModuleResolutionKind.Bundler };
  const outDir = options.outDir ?? join(root, 'dist');
  let written = 0;
  for (const src of ['core', 'gitops', 'cli', 'runtime'].flatMap((d) => sources(join(root, d), []))) {
    const out = join(outDir, relative(root, src).replace(/\.ts$/, '.js'));
    let builtAt = 0;
    try { builtAt = statSync(out).mtimeMs; } catch { /* missing: write it */ }
    if (builtAt >= statSync(src).mtimeMs) continue;
    const r = ts.transpileModule(readFileSync(src, 'utf8'), { compilerOptions: options, fileName: src });
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, r.outputText);
    if (r.sourceMapText) writeFileSync(`${out}.map`, r.sourceMapText);
    written++;
  }
  return written;
}
