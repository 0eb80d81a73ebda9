import fc from 'fast-check';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { DOC_ID, responseChecker, toDraft07, type OpenApiDoc, type ViolationKind } from '../helpers/openapi-check.js';
import { arbitraryFor, type Schema } from './schema-arbitrary.js';

// ajv-formats ships CommonJS with a default export; under NodeNext it arrives wrapped.
const addFormats = addFormatsModule as unknown as // reason: CommonJS default export seen through NodeNext
  typeof addFormatsModule.default;

interface Parameter { in: string; name: string; required?: boolean; schema: Schema }
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  security?: unknown[];
}
type Doc = OpenApiDoc & { paths: Record<string, Record<string, Operation>> };

/** One operation to fuzz. */
interface Target { method: string; path: string; op: Operation }

/** One generated request, before the known ids are put in. */
interface Generated { params: Record<string, string>; query: Record<string, unknown>; mediaType?: string; body?: unknown; picks: number[]; accept: string }

/** What an operation got. */
export interface OperationFigures { sent: number; statuses: Record<string, number>; refusedSamples: string[] }

/** The figures of a run (docs/api.md "Fuzzing the document"). */
export interface FuzzReport {
  seed: number;
  perOperation: number;
  operations: number;
  requests: number;
  /** generated requests the document's own schemas refuse (not sent) */
  invalidGenerated: number;
  /** 500s, and any other 5xx the operation does not document */
  serverErrors: number;
  /** documented 502 and 503 answers: an upstream that failed or a feature switched off (mail, a git source) */
  documentedUnavailable: number;
  undocumentedStatus: number;
  mediaTypeViolations: number;
  schemaViolations: number;
  /** schema-valid requests answered 400 (or 413, 415, 422: the body's form) */
  refused4xx: number;
  timeouts: number;
  /** distinct violations with their counts */
  violations: string[];
  byOperation: Record<string, OperationFigures>;
}

const METHODS = ['post', 'put', 'patch', 'get', 'options', 'delete'];
/** Statuses that say "this request's form is wrong": what a schema-valid request should not get. */
const REFUSALS = new Set([400, 413, 415, 422]);

/** Every operation of the document, creates first in each round and deletes last, so later requests find ids. */
function targetsOf(doc: Doc): Target[] {
  const out: Target[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) if (METHODS.includes(method)) out.push({ method, path, op });
  }
  return out.sort((a, b) => METHODS.indexOf(a.method) - METHODS.indexOf(b.method) || a.path.localeCompare(b.path));
}

/** A stable 31-bit number for a string (the per-operation seed). */
function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return (h >>> 0) & 0x7fffffff;
}

/** Ajv as a generic tool: standard formats checked, the project's unknown to it (ignored), OpenAPI's nullable read. */
function requestValidator(doc: Doc) {
  const ajv = new Ajv({ strict: false, allErrors: true, logger: false });
  addFormats(ajv);
  ajv.addSchema({ $id: DOC_ID, components: toDraft07(doc.components ?? {}) });
  const cache = new Map<Schema, ValidateFunction>();
  return (schema: Schema, value: unknown): boolean => {
    let v = cache.get(schema);
    if (!v) cache.set(schema, (v = ajv.compile(toDraft07(schema) as object)));
    return v(value);
  };
}

/** The arbitrary of one operation's requests. */
function requestArbitrary(t: Target, doc: Doc): fc.Arbitrary<Generated> {
  const resolve = (ref: string): Schema => {
    const name = ref.replace('#/components/schemas/', '');
    const s = doc.components?.schemas?.[name];
    if (!s) throw new Error(`unresolved ${ref}`);
    return s as Schema;
  };
  const params = t.op.parameters ?? [];
  const pathArbs = Object.fromEntries(params.filter((p) => p.in === 'path').map((p) => [p.name, arbitraryFor(p.schema, resolve).map(String)]));
  const query = params.filter((p) => p.in === 'query');
  const queryArb = fc.record(Object.fromEntries(query.map((p) => [p.name, arbitraryFor(p.schema, resolve)])), { requiredKeys: query.filter((p) => p.required).map((p) => p.name) });
  const content = t.op.requestBody?.content ?? {};
  const media = Object.keys(content);
  const bodyArb: fc.Arbitrary<{ mediaType?: string; body?: unknown }> = media.length === 0
    ? fc.constant({})
    : fc.oneof(...media.map((m) => arbitraryFor(content[m]!.schema, resolve).map((body) => ({ mediaType: m, body }))));
  return fc.record({
    params: fc.record(pathArbs) as fc.Arbitrary<Record<string, string>>,
    query: queryArb as fc.Arbitrary<Record<string, unknown>>,
    body: bodyArb,
    picks: fc.array(fc.nat(), { minLength: 4, maxLength: 4 }),
    accept: fc.constantFrom('application/json', 'text/html,application/xhtml+xml', '*/*'),
  }).map((g) => ({ params: g.params, query: g.query, picks: g.picks, accept: g.accept, ...g.body }));
}

/** Encodes a body in its media type. */
function encode(mediaType: string, body: unknown): { body: BodyInit; contentType?: string } {
  if (mediaType === 'multipart/form-data') {
    const fd = new FormData();
    for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
      for (const item of Array.isArray(v) ? v : [v]) fd.append(k, String(item));
    }
    return { body: fd };
  }
  if (mediaType === 'application/x-www-form-urlencoded') {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(body as Record<string, unknown>)) for (const item of Array.isArray(v) ? v : [v]) q.append(k, String(item));
    return { body: q.toString(), contentType: mediaType };
  }
  return { body: mediaType === 'text/plain' ? JSON.stringify(body) : JSON.stringify(body), contentType: mediaType };
}

/** Collects every `id` (and submission id) an answer names, for the next requests' path parameters. */
function collectIds(node: unknown, out: Set<string>, depth = 0): void {
  if (depth > 6 || !node || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const v of node.slice(0, 20)) collectIds(v, out, depth + 1);
    return;
  }
  for (const [k, v] of Object.entries(node)) {
    if ((k === 'id' || k.endsWith('_id') || k.endsWith('Id')) && (typeof v === 'string' || typeof v === 'number')) out.add(String(v));
    else collectIds(v, out, depth + 1);
  }
}

export interface FuzzContext {
  url: string;
  doc: unknown;
  /** the form-service key sent as bearer on /public/v1 */
  formKey: string;
  /** ids made before the run (a form, a submission) */
  ids: string[];
}

/**
 * Fuzzes every operation of the document with `perOp` requests generated from its own request
 * schemas (seeded: the same seed sends the same requests, save the ids the daemon chose), and
 * checks every answer against the document: status documented, media type documented, JSON body
 * valid for its schema. Rounds go over all operations in turn, so later requests can use ids that
 * earlier ones made.
 */
export async function fuzzApi(ctx: FuzzContext, perOp: number, seed: number, progress: (line: string) => void = () => undefined): Promise<FuzzReport> {
  const doc = ctx.doc as Doc;
  const targets = targetsOf(doc);
  const check = responseChecker(doc);
  const valid = requestValidator(doc);
  const ids = new Set(ctx.ids);
  const report: FuzzReport = {
    seed, perOperation: perOp, operations: targets.length, requests: 0, invalidGenerated: 0, serverErrors: 0, documentedUnavailable: 0, undocumentedStatus: 0,
    mediaTypeViolations: 0, schemaViolations: 0, refused4xx: 0, timeouts: 0, violations: [], byOperation: {},
  };
  const violations = new Map<string, number>();
  const samples = new Map<Target, Generated[]>();
  for (const t of targets) {
    try {
      samples.set(t, fc.sample(requestArbitrary(t, doc), { seed: seed ^ hash(`${t.method} ${t.path}`), numRuns: perOp }));
    } catch (err) {
      violations.set(`${t.op.operationId}: no request could be generated (${(err as Error).message.split('\n')[0]})`, 1);
      samples.set(t, []);
    }
    report.byOperation[t.op.operationId] = { sent: 0, statuses: {}, refusedSamples: [] };
  }
  const note = (v: string, kind: ViolationKind | '5xx') => {
    violations.set(v, (violations.get(v) ?? 0) + 1);
    if (kind === 'status') report.undocumentedStatus++;
    else if (kind === 'media-type') report.mediaTypeViolations++;
    else if (kind === 'schema') report.schemaViolations++;
  };

  for (let round = 0; round < perOp; round++) {
    for (const t of targets) {
      const g = samples.get(t)![round];
      if (!g) continue;
      const figures = report.byOperation[t.op.operationId]!;
      // path parameters: a known id most of the time (when it fits the parameter's schema), else the generated value
      const known = [...ids];
      const pathParams = { ...g.params };
      (t.op.parameters ?? []).filter((p) => p.in === 'path').forEach((p, i) => {
        const pick = known.length ? known[g.picks[i % g.picks.length]! % known.length] : undefined;
        if (pick !== undefined && g.picks[3]! % 4 !== 0 && valid(p.schema, pick)) pathParams[p.name] = pick;
      });
      const paramsOk = (t.op.parameters ?? []).every((p) => {
        const v = p.in === 'path' ? pathParams[p.name] : g.query[p.name];
        return v === undefined ? !p.required : valid(p.schema, v);
      });
      const bodySchema = g.mediaType ? t.op.requestBody!.content[g.mediaType]!.schema : undefined;
      if (!paramsOk || (bodySchema && !valid(bodySchema, g.body))) {
        report.invalidGenerated++;
        continue;
      }
      const path = t.path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(pathParams[name] ?? ''));
      const qs = new URLSearchParams();
      for (const [k, v] of Object.entries(g.query)) if (v !== undefined) qs.append(k, String(v));
      const headers: Record<string, string> = { accept: g.accept };
      if (path.startsWith('/public/v1/')) headers.authorization = `Bearer ${ctx.formKey}`;
      let body: BodyInit | undefined;
      if (g.mediaType) {
        const e = encode(g.mediaType, g.body);
        body = e.body;
        if (e.contentType) headers['content-type'] = e.contentType;
      }
      const target = `${ctx.url}${path}${qs.size ? `?${qs}` : ''}`;
      let res: Response;
      try {
        res = await fetch(target, { method: t.method.toUpperCase(), headers, body, redirect: 'manual', signal: AbortSignal.timeout(60_000) });
      } catch (err) {
        report.timeouts++;
        note(`${t.op.operationId}: no answer (${(err as Error).message})`, '5xx');
        continue;
      }
      const text = await res.text();
      report.requests++;
      figures.sent++;
      figures.statuses[res.status] = (figures.statuses[res.status] ?? 0) + 1;
      const mediaType = (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      const r = check(t.method.toUpperCase(), t.path, res.status, mediaType, t.method === 'options' ? undefined : text);
      if (res.status >= 500) {
        if (res.status !== 500 && r.kind !== 'status') report.documentedUnavailable++;
        else {
          report.serverErrors++;
          note(`${t.method.toUpperCase()} ${t.path} → ${res.status}: ${text.slice(0, 200)}`, '5xx');
        }
      }
      if (REFUSALS.has(res.status)) {
        report.refused4xx++;
        if (figures.refusedSamples.length < 5) figures.refusedSamples.push(`${res.status} ${text.slice(0, 160)} ← ${g.mediaType ?? ''} ${JSON.stringify(g.body ?? g.query).slice(0, 200)}`);
      }
      if (r.violation) note(r.violation, r.kind!);
      if (res.ok && mediaType === 'application/json' && text) {
        try { collectIds(JSON.parse(text), ids); } catch { /* the check above reports a body that is not JSON */ }
      }
    }
    progress(`round ${round + 1}/${perOp}: ${report.requests} requests, ${report.serverErrors} 5xx, ${report.undocumentedStatus} undocumented, ${report.schemaViolations} schema violations`);
  }
  report.violations = [...violations].map(([v, n]) => (n > 1 ? `${v} (${n} times)` : v));
  return report;
}

/** The figures as lines: totals, then the operations most often refused (schema-valid requests answered 400/413/415/422). */
export function formatReport(r: FuzzReport, top = 10): string[] {
  const lines = [
    `operations: ${r.operations}, requests per operation: ${r.perOperation}, seed: ${r.seed}`,
    `requests sent: ${r.requests} (generated but invalid for the document, not sent: ${r.invalidGenerated})`,
    `server errors (500, or a 5xx not documented): ${r.serverErrors}`,
    `documented 502/503 (upstream failed, feature not set up): ${r.documentedUnavailable}`,
    `undocumented status codes: ${r.undocumentedStatus}`,
    `undocumented media types: ${r.mediaTypeViolations}`,
    `response-schema violations: ${r.schemaViolations}`,
    `no answer (timeouts): ${r.timeouts}`,
    `schema-valid requests refused with 400/413/415/422: ${r.refused4xx}`,
  ];
  const offenders = Object.entries(r.byOperation)
    .map(([id, f]) => ({ id, refused: [...REFUSALS].reduce((n, s) => n + (f.statuses[s] ?? 0), 0), f }))
    .filter((o) => o.refused > 0).sort((a, b) => b.refused - a.refused || a.id.localeCompare(b.id)).slice(0, top);
  if (offenders.length) lines.push('top refused operations:');
  for (const o of offenders) {
    lines.push(`  ${o.id}: ${o.refused}/${o.f.sent} ${JSON.stringify(o.f.statuses)}`);
    for (const s of o.f.refusedSamples.slice(0, 2)) lines.push(`    ${s}`);
  }
  if (r.violations.length) lines.push('violations:', ...r.violations.map((v) => `  ${v}`));
  return lines;
}
