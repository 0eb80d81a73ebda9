import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { extname, join, sep } from 'node:path';

/** Content types of the files a dashboard is made of; anything else is sent as bytes. */
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
};

/** The content type of a file name, by extension (case-insensitive); `application/octet-stream` when unknown. */
export function contentTypeOf(name: string): string {
  return TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream';
}

/** One file of the dashboard held in memory. */
export interface Asset { body: Buffer; type: string; etag: string }

/**
 * Splits the part of a URL path below the dashboard's prefix into safe segments, or returns
 * undefined when it cannot name a file inside the folder: a segment that is empty (`a//b`), `.`,
 * `..` or hidden (starts with `.`), that decodes to a separator, NUL or a backslash, or that is not
 * valid percent-encoding. An empty path names `index.html`. Pure: no file system access.
 */
export function safeSegments(path: string): string[] | undefined {
  const raw = path === '' || path.endsWith('/') ? `${path}index.html` : path;
  const out: string[] = [];
  for (const enc of raw.split('/')) {
    let seg: string;
    try { seg = decodeURIComponent(enc); } catch { return undefined; }
    if (seg === '' || seg.startsWith('.') || /[/\\\0]/.test(seg)) return undefined;
    out.push(seg);
  }
  return out;
}

const etagOf = (body: Buffer) => `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;

/**
 * Reads the built-in dashboard (every regular file under `dir`, hidden names skipped) into memory
 * once, keyed by the path below `dir` with `/` separators. Errors: the folder cannot be read.
 */
export function loadBuiltinAssets(dir: string): Map<string, Asset> {
  const out = new Map<string, Asset>();
  const walk = (abs: string, rel: string) => {
    for (const name of readdirSync(abs)) {
      if (name.startsWith('.')) continue;
      const p = join(abs, name);
      const key = rel ? `${rel}/${name}` : name;
      const st = statSync(p);
      if (st.isDirectory()) walk(p, key);
      else if (st.isFile()) {
        const body = readFileSync(p);
        out.set(key, { body, type: contentTypeOf(name), etag: etagOf(body) });
      }
    }
  };
  walk(dir, '');
  return out;
}

/** A file of the operator's folder that may be served: its real path, size and validator. */
export interface FolderFile { path: string; size: number; type: string; etag: string }

/**
 * Resolves a request path inside the operator's dashboard folder (`api.webuiPath`). Returns
 * undefined (a 404) unless the path is made of safe segments ({@link safeSegments}) and its real
 * path, every symlink followed, is a regular file inside the folder's real path: a link that
 * points out of the folder is refused like a missing file. Never throws for a missing file.
 */
export async function resolveFolderFile(root: string, path: string): Promise<FolderFile | undefined> {
  const segs = safeSegments(path);
  if (!segs) return undefined;
  try {
    const base = await realpath(root);
    const real = await realpath(join(base, ...segs));
    if (!real.startsWith(base + sep)) return undefined;
    const st = await stat(real);
    if (!st.isFile()) return undefined;
    return { path: real, size: st.size, type: contentTypeOf(real), etag: `W/"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"` };
  } catch {
    return undefined;
  }
}

/** The operator's folder as a real directory, or the reason it cannot serve (checked at start). */
export function checkFolder(root: string): string | undefined {
  try {
    if (!statSync(realpathSync(root)).isDirectory()) return 'not a directory';
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? String(err);
  }
}
