import { META_FIELDS, type Row } from '../model/types.js';
import { secretFieldsOf } from '../model/kinds.js';
import type { Change, Plan } from './types.js';
import { fieldChanges } from './diff.js';

/** The stable JSON form of one change: no row dumps, only what changes. */
export interface ChangeJson {
  op: Change['op'];
  kind: string;
  key: string;
  id: string;
  label: string;
  source: string | null;
  fields: { field: string; before: unknown; after: unknown }[];
}

const keyOf = (c: Change) => String((c.after ?? c.before)?.key ?? c.id);
const sourceOf = (c: Change) => ((c.after ?? c.before)?.source as string | undefined) ?? null;

/** What a rendering shows for a secret field (a password hash, a sealed TOTP secret, a key hash). */
export const REDACTED = '[redacted]';
/** A field's value as renderings show it: secret fields of the kind (KindInfo.secretFields) are redacted; null stays null. */
const shown = (kind: string, field: string, v: unknown) => (v !== null && v !== undefined && secretFieldsOf(kind).has(field) ? REDACTED : v);

/** One change as `planToJson` renders it. Pure. */
export function changeToJson(c: Change): ChangeJson {
  return {
    op: c.op, kind: c.kind, key: keyOf(c), id: c.id, label: c.label, source: sourceOf(c),
    fields: c.op === 'delete' ? contentFields(c.before!).map(([field, before]) => ({ field, before, after: null })) : fieldChanges(c).map((f) => ({ field: f.field, before: shown(c.kind, f.field, f.before ?? null), after: shown(c.kind, f.field, f.after ?? null) })),
  };
}

const str = JSON.stringify;
const REDACTED_JSON = str(REDACTED);

/** The content fields of a row shape in sorted order, each with its text up to the value. */
interface Shape { keys: string[]; fields: { key: string; head: string; secret: boolean }[] }
/** the last shape seen per kind: rows of one kind mostly have their keys in one order */
const shapes = new Map<string, Shape>();

function shapeOf(kind: string, keys: string[]): Shape {
  const last = shapes.get(kind);
  if (last && last.keys.length === keys.length && last.keys.every((k, i) => k === keys[i])) return last;
  const secret = secretFieldsOf(kind);
  const fields = [...keys].sort().filter((k) => !META_FIELDS.has(k)).map((key) => ({ key, head: `{"field":${str(key)},"before":null,"after":`, secret: secret.has(key) }));
  const shape = { keys, fields };
  shapes.set(kind, shape);
  return shape;
}

/**
 * `JSON.stringify(changeToJson(c))`: the same text, written straight for a create that lists no
 * field changes (every set content field of `after`, sorted, `before` null), the bulk of a large
 * plan; any other change goes through `changeToJson`. Pure (it keeps the sorted field names of the
 * last row shape of each kind).
 */
export function changeJsonText(c: Change): string {
  const row = c.after as Record<string, unknown> | undefined;
  if (c.op !== 'create' || c.fields.length > 0 || !row || typeof c.kind !== 'string' || typeof c.id !== 'string' || typeof c.label !== 'string') return str(changeToJson(c));
  let fields = '';
  for (const f of shapeOf(c.kind, Object.keys(row)).fields) {
    const v = row[f.key];
    if (v === undefined || v === null) continue;
    fields += `${fields === '' ? '' : ','}${f.head}${f.secret ? REDACTED_JSON : str(v)}}`;
  }
  const source = row.source;
  return `{"op":"create","kind":${str(c.kind)},"key":${str(String(row.key ?? c.id))},"id":${str(c.id)},"label":${str(c.label)},"source":${source === undefined || source === null ? 'null' : str(source)},"fields":[${fields}]}`;
}

/**
 * A plan as stable JSON: fixed key order, changes in plan order, field changes sorted by field,
 * creates listing every field (before null) and deletes every field (after null). Pure.
 */
export function planToJson(plan: Plan): Record<string, unknown> {
  const changes: ChangeJson[] = plan.changes.map(changeToJson);
  const s = plan.safety;
  return {
    revision: plan.revision,
    origin: plan.origin,
    baseVersion: plan.baseVersion,
    counts: { create: plan.counts.create, update: plan.counts.update, delete: plan.counts.delete },
    safety: { safe: s.safe, reason: s.reason ?? null, message: s.message ?? null, existing: s.existing, updates: s.updates, deletes: s.deletes, maxChangePercent: s.maxChangePercent, minExisting: s.minExisting },
    changes,
  };
}

function contentFields(row: Row): [string, unknown][] {
  return Object.keys(row).filter((k) => !META_FIELDS.has(k)).sort().map((k) => [k, shown(row.kind, k, (row as Record<string, unknown>)[k] ?? null)]);
}

const show = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v ?? null));

const COLOURS = { add: '\x1b[32m', del: '\x1b[31m', head: '\x1b[1m', warn: '\x1b[33m', reset: '\x1b[0m' };

/**
 * A plan as a kubectl-style unified diff, one block per resource (`--- live/<kind>/<key>`,
 * `+++ git/<kind>/<key>`), unchanged fields as context, then a summary and the safety verdict.
 * `color` wraps added lines in green and removed ones in red (use it on a TTY). Pure.
 */
export function renderPlanText(plan: Plan, opts: { color?: boolean } = {}): string {
  const c = opts.color ? COLOURS : { add: '', del: '', head: '', warn: '', reset: '' };
  const paint = (code: string, s: string) => (code ? `${code}${s}${c.reset}` : s);
  const out: string[] = [];
  for (const ch of plan.changes) {
    const path = `${ch.kind}/${keyOf(ch)}`;
    const src = sourceOf(ch);
    out.push(paint(c.head, `${ch.op === 'create' ? '--- /dev/null' : `--- live/${path}`}`));
    const owner = (ch.after ?? ch.before)?.origin === 'api' ? 'api' : 'git';
    out.push(paint(c.head, `${ch.op === 'delete' ? '+++ /dev/null' : `+++ ${owner}/${path}`}${src ? `\t(${src})` : ''}`));
    out.push(paint(c.head, `@@ ${ch.op} ${ch.label} @@`));
    if (ch.op === 'create') for (const [k, v] of contentFields(ch.after!)) out.push(paint(c.add, `+${k}: ${show(v)}`));
    else if (ch.op === 'delete') for (const [k, v] of contentFields(ch.before!)) out.push(paint(c.del, `-${k}: ${show(v)}`));
    else {
      const changed = new Map(ch.fields.map((f) => [f.field, f]));
      const keys = new Set([...contentFields(ch.before!).map(([k]) => k), ...changed.keys()]);
      for (const k of [...keys].sort()) {
        const f = changed.get(k);
        if (!f) { out.push(` ${k}: ${show(shown(ch.kind, k, (ch.before as Record<string, unknown>)[k]))}`); continue; }
        if (f.before !== null && f.before !== undefined) out.push(paint(c.del, `-${k}: ${show(shown(ch.kind, k, f.before))}`));
        if (f.after !== null && f.after !== undefined) out.push(paint(c.add, `+${k}: ${show(shown(ch.kind, k, f.after))}`));
      }
    }
  }
  const n = plan.counts;
  out.push(n.create + n.update + n.delete === 0 ? 'No changes.' : `Plan: ${n.create} to create, ${n.update} to update, ${n.delete} to delete.`);
  if (!plan.safety.safe) out.push(paint(c.warn, `Held back (${plan.safety.reason}): ${plan.safety.message}`));
  return `${out.join('\n')}\n`;
}
