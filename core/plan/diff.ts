import { META_FIELDS, type Row } from '../model/types.js';
import type { Change, FieldChange } from './types.js';

/** Deep equality for JSON-like values (rows hold only JSON data). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') {
    // undefined and null both mean "unset" in a row
    return (a === undefined || a === null) && (b === undefined || b === null);
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => jsonEqual(v, bb[i]));
  }
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** Field-level differences between two rows, ignoring identity and ownership fields. Sorted by field. */
export function diffFields(before: Row, after: Row): FieldChange[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  const out: FieldChange[] = [];
  for (const k of [...keys].sort()) {
    if (META_FIELDS.has(k)) continue;
    const b = (before as Record<string, unknown>)[k];
    const a = (after as Record<string, unknown>)[k];
    if (!jsonEqual(b, a)) out.push({ field: k, before: b ?? null, after: a ?? null });
  }
  return out;
}

/**
 * True when a row's content fields equal `fields` (the same comparison as `diffFields`, without
 * building the next row): the fast path for the unchanged rows that make up most of a large plan.
 */
export function sameContent(before: Row, fields: Record<string, unknown>): boolean {
  const b = before as Record<string, unknown>;
  for (const k in fields) if (!META_FIELDS.has(k) && !jsonEqual(b[k], fields[k])) return false;
  for (const k in b) if (!META_FIELDS.has(k) && !(k in fields) && b[k] !== undefined && b[k] !== null) return false;
  return true;
}

/** The field-level changes of a create or update: a create's are every set field of `after` (`diffFields` from nothing). */
export function fieldChanges(c: Change): FieldChange[] {
  if (c.op !== 'create' || c.fields.length > 0 || !c.after) return c.fields;
  return diffFields({ id: '', kind: c.kind } as Row, c.after);
}
