import { FORMAT_HINTS } from '../config/format-patterns.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The request body as the document shows it (`{content: {<media type>: {schema}}}`), for a
     * route whose handler reads the body itself, such as a multipart stream: fastify does not
     * validate it (server.ts puts it in the route's document only).
     */
    documentBody?: unknown;
  }
}

/** Keys whose values are data, not schemas: never rewritten. */
const DATA_KEYS = new Set(['example', 'examples', 'default', 'enum', 'const']);

/**
 * One schema node made valid OpenAPI 3.0.3 and readable by generic tools: an empty `required` list
 * (which 3.0.3 forbids, and which validators reject the whole document for) is dropped, and a
 * project format (`ip`, `printable`…) gets its standard keywords beside it (FORMAT_HINTS: a
 * `pattern`, a `minLength`), unless the schema already says tighter.
 */
function finishNode(node: Record<string, unknown>): void {
  if (Array.isArray(node.required) && node.required.length === 0) delete node.required;
  const hint = typeof node.format === 'string' ? FORMAT_HINTS[node.format] : undefined;
  if (!hint) return;
  if (node.pattern === undefined) node.pattern = hint.pattern;
  if (hint.minLength !== undefined && (typeof node.minLength !== 'number' || node.minLength < hint.minLength)) node.minLength = hint.minLength;
}

function walk(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) walk(item);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const obj = node as Record<string, unknown>;
  finishNode(obj);
  for (const [k, v] of Object.entries(obj)) if (!DATA_KEYS.has(k)) walk(v);
}

/**
 * The last step of building the OpenAPI document (@fastify/swagger's `transformObject`), applied to
 * the whole document once, after every route and component is in it: whatever a schema file or a
 * route declares, the served document is valid OpenAPI 3.0.3 and says each format's rule in
 * standard keywords (docs/api.md "OpenAPI document"). Works on a copy: the route schemas that
 * validate requests are not touched.
 */
export function finishDocument<T extends object>(doc: T): T {
  const out = structuredClone(doc);
  walk(out);
  declareTags(out as { paths?: Record<string, Record<string, { tags?: string[] }>>; tags?: { name: string }[] });
  return out;
}

/** Every tag an operation uses is declared in the top-level `tags` list, in name order (tools group operations by it). */
function declareTags(doc: { paths?: Record<string, Record<string, { tags?: string[] }>>; tags?: { name: string }[] }): void {
  const declared = new Set((doc.tags ?? []).map((t) => t.name));
  const used = new Set(Object.values(doc.paths ?? {}).flatMap((item) => Object.values(item).flatMap((op) => op.tags ?? [])));
  const missing = [...used].filter((t) => !declared.has(t)).sort();
  if (missing.length) doc.tags = [...(doc.tags ?? []), ...missing.map((name) => ({ name }))];
}
