import { COMMANDS } from './commands.js';
import { inputError } from './exit-codes.js';

/** Commands and their long flags (`--name`, and whether each takes a value), from the command table, sorted. */
function commandFlags(): [string, { flag: string; value: boolean }[]][] {
  return Object.keys(COMMANDS).sort().map((name) => {
    const c = COMMANDS[name]!;
    const flags = new Map<string, boolean>([['--help', false], ['--output', true]]);
    for (const v of c.values) if (v.length > 1) flags.set(`--${v}`, true);
    for (const b of c.booleans) if (b.length > 1) flags.set(`--${b}`, false);
    return [name, [...flags].sort(([a], [b]) => (a < b ? -1 : 1)).map(([flag, value]) => ({ flag, value }))];
  });
}

/**
 * A bash completion script for gslbctl: commands first, then that command's flags; directories
 * and files for everything else. Generated from the command table, so it never goes stale.
 */
export function bashCompletion(): string {
  const cases = commandFlags().map(([name, flags]) => `    ${name}) flags="${flags.map((f) => f.flag).join(' ')}" ;;`).join('\n');
  return `# bash completion for gslbctl: source <(gslbctl completion bash)
_gslbctl() {
  local cur=\${COMP_WORDS[COMP_CWORD]} cmd=\${COMP_WORDS[1]} flags=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${Object.keys(COMMANDS).sort().join(' ')} --help --version" -- "$cur"))
    return
  fi
  case "$cmd" in
${cases}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o filenames -F _gslbctl gslbctl
`;
}

/** A zsh completion script for gslbctl (compsys): commands with their summaries, then flags and files. */
export function zshCompletion(): string {
  const quote = (s: string) => s.replace(/'/g, "'\\''").replace(/:/g, '\\:');
  const cmds = Object.keys(COMMANDS).sort().map((n) => `    '${n}:${quote(COMMANDS[n]!.summary)}'`).join('\n');
  // a flag that takes a value completes it as a file name (the common case: --config, --db)
  const cases = commandFlags().map(([name, flags]) => `    ${name}) _arguments ${flags.map((f) => (f.value ? `'${f.flag}[]:value:_files'` : `'${f.flag}[]'`)).join(' ')} '*:file:_files' ;;`).join('\n');
  return `#compdef gslbctl
# zsh completion for gslbctl: gslbctl completion zsh > "\${fpath[1]}/_gslbctl"
_gslbctl() {
  local -a commands
  commands=(
${cmds}
  )
  if (( CURRENT == 2 )); then
    _describe 'command' commands
    return
  fi
  shift words; (( CURRENT-- ))
  case "$words[1]" in
${cases}
  esac
}
_gslbctl "$@"
`;
}

COMMANDS.completion = {
  usage: 'completion bash|zsh',
  summary: 'print a shell completion script (bash: source <(gslbctl completion bash))',
  values: [],
  booleans: [],
  async run(_flags, args) {
    const shell = args[0];
    if (shell === 'bash') process.stdout.write(bashCompletion());
    else if (shell === 'zsh') process.stdout.write(zshCompletion());
    else throw inputError(`completion: say bash or zsh${shell ? ` (not "${shell}")` : ''}`);
    return 0;
  },
};
