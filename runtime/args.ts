/**
 * Parses daemon and CLI arguments: `--flag value`, `--flag=value`, Go-style `-flag value`, and
 * boolean flags. Unknown flags are errors. Returns flags and positional arguments.
 */
export function parseArgs(argv: string[], spec: { values: string[]; booleans: string[]; aliases?: Record<string, string> }) {
  const flags: Record<string, string | boolean> = {};
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('-') || a === '-') { positional.push(a); continue; }
    if (a === '--') { positional.push(...argv.slice(i + 1)); break; }
    let name = a.replace(/^--?/, '');
    let value: string | undefined;
    const eq = name.indexOf('=');
    if (eq >= 0) { value = name.slice(eq + 1); name = name.slice(0, eq); }
    name = spec.aliases?.[name] ?? name;
    if (spec.booleans.includes(name)) { flags[name] = value === undefined ? true : value !== 'false'; continue; }
    if (!spec.values.includes(name)) throw new Error(`unknown flag ${a}`);
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined) throw new Error(`flag ${a} needs a value`);
    }
    flags[name] = value;
  }
  return { flags, positional };
}
