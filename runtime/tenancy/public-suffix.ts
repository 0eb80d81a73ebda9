import { parse } from 'tldts';

/**
 * Public suffixes (docs/api.md "Name ownership", docs/security.md "Names"): a name that is a top-level
 * domain or a public suffix (`com`, `co.uk`, `github.io`), and a wildcard at or above one (`*.com`,
 * `*.co.uk`, `*.ck`), belongs to no single owner, so no row may claim it: one tenant could otherwise
 * squat every name under it. The list is the Public Suffix List as the `tldts` package ships it,
 * ICANN and private sections both (a private suffix such as `github.io` is a boundary between owners
 * as much as `co.uk`). A top-level domain the list does not know (`test`, `internal`) is a suffix of
 * one label, as the list's `*` default rule says: `example.test` is a name, `test` is not. Pure.
 */

/** Why a name is refused: the suffix it is or covers, and a message for the caller. */
export interface SuffixRefusal { suffix: string; message: string }

const OPTIONS = { allowPrivateDomains: true, extractHostname: false, validateHostname: false, detectIp: false } as const;

/** A label no rule of the list names, to ask whether every name one label under a name is a suffix (the list's `*.ck` rules). */
const PROBE = 'gslbd-wildcard-probe';

/** True when `name` (lower case, no trailing dot) is a public suffix itself. */
function isSuffix(name: string): boolean {
  return parse(name, OPTIONS).domain === null;
}

/**
 * Why `name` may not be claimed, or undefined when it may: it is a public suffix, or it is a
 * wildcard (`*.x`) whose base `x` is a suffix or whose every child is one. `name` may carry a
 * trailing dot and any case. A name under a suffix (`www.bshop.com`, `example.test`,
 * `*.example.test`) is fine.
 */
export function publicSuffixRefusal(name: string): SuffixRefusal | undefined {
  const n = name.toLowerCase().replace(/\.$/, '');
  if (n === '' || n === '*') return { suffix: '.', message: `${name} covers every name (the DNS root)` };
  if (n.startsWith('*.')) {
    const base = n.slice(2);
    if (isSuffix(base)) return { suffix: base, message: `${name} covers every name under the public suffix ${base}` };
    if (isSuffix(`${PROBE}.${base}`)) return { suffix: `*.${base}`, message: `${name} covers public suffixes (every name one label under ${base} is one)` };
    return undefined;
  }
  if (isSuffix(n)) return { suffix: n, message: `${name} is a public suffix (${n}); use a name under it` };
  return undefined;
}
