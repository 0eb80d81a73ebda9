import { signerAllowed, type Signer } from './signature.js';

/** One `gitops.quorum` entry: changes under `path` need `required` distinct keys of `keys`. */
export interface QuorumRule { path: string; keys: string[]; required: number }

/** A verified signature on the head: of the commit itself, or of a signed annotated tag pointing at it. */
export interface CoSignature { signer: Signer; source: string }

/** What a rule found: the distinct listed keys that signed (first source each) and how many are missing. */
export interface QuorumVerdict { met: boolean; signedBy: CoSignature[]; missing: number }

/**
 * True when `file` (repo-relative) is under the rule's `path`: `prod/` (or `prod`) covers the
 * folder and everything below it, `prod/pools.yaml` that file. A leading `/` is ignored. Pure.
 */
export function pathCovers(path: string, file: string): boolean {
  const p = path.replace(/^\/+/, '');
  if (p === '' || p === '/') return true;
  const dir = p.endsWith('/') ? p : `${p}/`;
  return file === p.replace(/\/+$/, '') || file.startsWith(dir);
}

/** The rules (with their index in gitops.quorum) that `changed` files fall under, each with its files. Pure. */
export function rulesTouched(rules: readonly QuorumRule[], changed: readonly string[]): { rule: QuorumRule; index: number; files: string[] }[] {
  return rules.map((rule, index) => ({ rule, index, files: changed.filter((f) => pathCovers(rule.path, f)) })).filter((t) => t.files.length > 0);
}

/**
 * Counts the signatures that satisfy `rule`: those whose primary or signing key is listed
 * (fingerprint or 16-hex key ID), one per primary key however often it signed. Pure.
 */
export function countQuorum(rule: QuorumRule, sigs: readonly CoSignature[]): QuorumVerdict {
  const byKey = new Map<string, CoSignature>();
  for (const s of sigs) if (signerAllowed(s.signer, rule.keys) && !byKey.has(s.signer.fingerprint)) byKey.set(s.signer.fingerprint, s);
  const signedBy = [...byKey.values()];
  const missing = Math.max(0, rule.required - signedBy.length);
  return { met: missing === 0, signedBy, missing };
}

/** `changes under prod/ (prod/pools.yaml, …) need 2 of 3 listed keys (gitops.quorum[0]): signed by A (Ops <…>) on the commit; 1 missing`. */
export function describeQuorum(t: { rule: QuorumRule; index: number; files: string[] }, v: QuorumVerdict): string {
  const files = `${t.files.slice(0, 3).join(', ')}${t.files.length > 3 ? `, … ${t.files.length} files` : ''}`;
  const who = v.signedBy.length ? v.signedBy.map((s) => `${s.signer.fingerprint} (${s.signer.userId}) on the ${s.source}`).join(', ') : 'no listed key';
  return `changes under ${t.rule.path} (${files}) need signatures of ${t.rule.required} of ${t.rule.keys.length} listed keys (gitops.quorum[${t.index}]): signed by ${who}; ${v.missing} missing`;
}
