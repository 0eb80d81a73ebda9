import { main } from '../../../cli/main.js';

/** Runs gslbctl in-process with stdout and stderr captured (optionally from another working directory). */
export async function runCtl(args: string[], cwd?: string): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const w1 = process.stdout.write.bind(process.stdout);
  const w2 = process.stderr.write.bind(process.stderr);
  const back = process.cwd();
  process.stdout.write = ((c: string) => { out += c; return true; }) as typeof process.stdout.write;
  process.stderr.write = ((c: string) => { err += c; return true; }) as typeof process.stderr.write;
  try {
    if (cwd) process.chdir(cwd);
    const code = await main(args);
    return { code, out, err };
  } finally {
    process.chdir(back);
    process.stdout.write = w1;
    process.stderr.write = w2;
  }
}
