import { LineCounter, parseAllDocuments, isMap, isNode, isScalar, type Document } from 'yaml';

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

/** A YAML syntax error with its place (1-based line and column) and the parser's first message line. */
export interface YamlSyntaxError { file: string; line: number; col: number; message: string }

/**
 * Parses every document of a YAML text. Syntax errors come back twice: as `file:line: message`
 * strings (`errors`, what the config loader prints) and located (`syntax`, in text order).
 */
export function parseYamlDocuments(text: string, file: string): { docs: YamlSource[]; errors: string[]; syntax: YamlSyntaxError[] } {
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const out: YamlSource[] = [];
  const syntax: YamlSyntaxError[] = [];
  const list = Array.isArray(docs) ? docs : [docs];
  for (const doc of list) {
    for (const err of doc.errors) {
      const pos = err.linePos?.[0] ?? lines.linePos(err.pos[0]);
      syntax.push({ file, line: pos.line, col: pos.col, message: err.message.split('\n')[0]! });
    }
    if (doc.errors.length === 0 && doc.contents !== null) out.push({ file, doc, lines, value: doc.toJS({ maxAliasCount: 100 }) });
  }
  return { docs: out, errors: syntax.map((e) => `${file}:${e.line}: ${e.message}`), syntax };
}

/** The line (1-based) of the value at `path`, or of its nearest existing parent. */
export function lineOf(src: YamlSource, path: (string | number)[]): number | undefined {
  for (let n = path.length; n >= 0; n--) {
    const node = src.doc.getIn(path.slice(0, n), true);
    if (isNode(node) && node.range) return src.lines.linePos(node.range[0]).line;
  }
  return undefined;
}

/**
 * Line and column (1-based) of the node at `path`, or of its nearest existing parent. With
 * `at: 'key'` and a path ending in a mapping key, the key itself (where an unknown key is written)
 * rather than its value.
 */
export function positionOf(src: YamlSource, path: (string | number)[], at: 'value' | 'key' = 'value'): { line: number; col: number } | undefined {
  if (at === 'key' && path.length > 0) {
    const parent = src.doc.getIn(path.slice(0, -1), true);
    const last = path[path.length - 1];
    if (isMap(parent)) {
      for (const pair of parent.items) {
        const k = pair.key;
        if (isScalar(k) && String(k.value) === String(last) && k.range) return src.lines.linePos(k.range[0]);
      }
    }
  }
  for (let n = path.length; n >= 0; n--) {
    const node = src.doc.getIn(path.slice(0, n), true);
    if (isNode(node) && node.range) return src.lines.linePos(node.range[0]);
  }
  return undefined;
}
