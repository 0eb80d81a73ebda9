import { badRequest } from '../errors.js';
import { isFqdn } from '../net/ip.js';

export type { TxtRecordRow } from '../ports/txt-records.js';

/** The fields of a TXT record a client sends. */
export interface TxtFields { name: string; values: string[]; ttl: number }

/** Defaults and limits (docs/dns.md "TXT records"). */
export const TXT_DEFAULT_TTL = 300;
export const TXT_MAX_VALUES = 50;
/** bytes of one value (UTF-8): 16 character-strings of 255; DKIM keys fit */
export const TXT_MAX_VALUE_BYTES = 4080;
/** bytes of all values of one name: a whole set stays well inside one TCP message */
export const TXT_MAX_SET_BYTES = 16000;

/** A broken rule of a TXT record: the field (`name`, `values`, `values[2]`) and the rule. */
export interface TxtProblem { field: string; index?: number; rule: string }

/** A TXT record body normalised: the name lower-cased with one trailing dot, ttl defaulted. No checks. */
export function normalizeTxt(body: { name: string; values: readonly string[]; ttl?: number | undefined }): TxtFields {
  const raw = String(body.name);
  const name = (raw.endsWith('.') ? raw : `${raw}.`).toLowerCase();
  return { name, values: [...body.values], ttl: body.ttl === undefined || body.ttl === 0 ? TXT_DEFAULT_TTL : body.ttl };
}

/**
 * The first rule a normalised TXT record breaks, or undefined: a valid name without a wildcard
 * label, 1 to 50 values, each and all within their byte limits, no value twice (DNS has no
 * duplicate records in a set).
 */
export function txtProblem(f: TxtFields): TxtProblem | undefined {
  if (!isFqdn(f.name)) return { field: 'name', rule: 'must be a valid DNS name, e.g. _acme-challenge.app.example.com.' };
  if (f.name.split('.').includes('*')) return { field: 'name', rule: 'wildcard names are not supported for TXT records' };
  if (f.values.length === 0 || f.values.length > TXT_MAX_VALUES) return { field: 'values', rule: `must hold 1 to ${TXT_MAX_VALUES} values` };
  let total = 0;
  const seen = new Set<string>();
  for (const [i, v] of f.values.entries()) {
    const n = Buffer.byteLength(v, 'utf8');
    if (n > TXT_MAX_VALUE_BYTES) return { field: 'values', index: i, rule: `at most ${TXT_MAX_VALUE_BYTES} bytes (UTF-8), got ${n}` };
    if (seen.has(v)) return { field: 'values', index: i, rule: 'the same value twice' };
    seen.add(v);
    total += n;
  }
  if (total > TXT_MAX_SET_BYTES) return { field: 'values', rule: `at most ${TXT_MAX_SET_BYTES} bytes in all, got ${total}` };
  return undefined;
}

/** {@link normalizeTxt} then {@link txtProblem}: throws 400 naming the field and the rule. */
export function txtFields(body: { name: string; values: readonly string[]; ttl?: number | undefined }): TxtFields {
  const f = normalizeTxt(body);
  const p = txtProblem(f);
  if (p) throw badRequest(`${p.field}${p.index === undefined ? '' : `[${p.index}]`}: ${p.rule}`);
  return f;
}

export { txtRdata, txtValueOf } from '../net/character-strings.js';
