import { LineCounter, parseAllDocuments, isNode, type Document } from 'yaml';

/**
 * A parsed YAML document that remembers where each value came from, so that validation errors can
 * name `file:line`.
 */
export interface YamlSource {
  file: string;
  doc: Document.Parsed;
  lines: LineCounter;
  value: unknown;
}

/** Parses every document of a YAML text; syntax errors come back as `file:line: message`. */
export function parseYamlDocuments(text: string, file: string): { docs: YamlSource[]; errors: string[] } {
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const out: YamlSource[] = [];
  const errors: string[] = [];
  const list = Array.isArray(docs) ? docs : [docs];
  for (const doc of list) {
    for (const err of doc.errors) {
      const line = err.linePos?.[0]?.line ?? lines.linePos(err.pos[0]).line;
      errors.push(`${file}:${line}: ${err.message.split('\n')[0]}`);
    }
    if (doc.errors.length === 0 && doc.contents !== null) out.push({ file, doc, lines, value: doc.toJS({ maxAliasCount: 100 }) });
  }
  return { docs: out, errors };
}

/** The line (1-based) of the value at `path`, or of its nearest existing parent. */
export function lineOf(src: YamlSource, path: (string | number)[]): number | undefined {
  for (let n = path.length; n >= 0; n--) {
    const node = src.doc.getIn(path.slice(0, n), true);
    if (isNode(node) && node.range) return src.lines.linePos(node.range[0]).line;
  }
  return undefined;
}
