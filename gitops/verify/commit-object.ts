/**
 * A git commit object split the way git signs it: the signature header (`gpgsig`, or
 * `gpgsig-sha256` in SHA-256 repositories) and its continuation lines removed give the payload that
 * `git commit -S` handed to gpg. Bytes are kept as they are (latin1 round-trips every byte).
 */
export interface CommitParts {
  /** the bytes the signature covers */
  payload: Buffer;
  /** the armored signature, or undefined for an unsigned commit */
  signature: string | undefined;
  tree: string;
  parents: string[];
  author: Person;
  committer: Person;
  message: string;
}

export interface Person { name: string; email: string; timestamp: number; tz: string }

function parsePerson(v: string): Person {
  const m = /^(.*?) <([^>]*)> (\d+) ([+-]\d{4})$/.exec(v);
  if (!m) return { name: v, email: '', timestamp: 0, tz: '+0000' };
  return { name: m[1]!, email: m[2]!, timestamp: Number(m[3]), tz: m[4]! };
}

/** Parses a raw commit object. Pure. Errors: throws on an object without a header/body separator. */
export function parseCommitObject(raw: Uint8Array): CommitParts {
  const text = Buffer.from(raw).toString('latin1');
  const end = text.indexOf('\n\n');
  if (end < 0) throw new Error('malformed commit object: no blank line after the headers');
  const headerLines = text.slice(0, end).split('\n');
  const kept: string[] = [];
  const sigLines: string[] = [];
  const headers: [string, string][] = [];
  let inSig = false;
  for (const line of headerLines) {
    if (line.startsWith(' ')) {
      // continuation of the previous header (RFC-822 style folding used by git)
      if (inSig) sigLines.push(line.slice(1));
      else { kept.push(line); const last = headers[headers.length - 1]; if (last) last[1] += `\n${line.slice(1)}`; }
      continue;
    }
    const sp = line.indexOf(' ');
    const name = sp < 0 ? line : line.slice(0, sp);
    const value = sp < 0 ? '' : line.slice(sp + 1);
    inSig = name === 'gpgsig' || name === 'gpgsig-sha256';
    if (inSig) { if (sigLines.length === 0) sigLines.push(value); continue; }
    kept.push(line);
    headers.push([name, value]);
  }
  const body = text.slice(end + 2);
  const payload = Buffer.from(`${kept.join('\n')}\n\n${body}`, 'latin1');
  const get = (n: string) => headers.find(([k]) => k === n)?.[1] ?? '';
  return {
    payload,
    signature: sigLines.length ? `${sigLines.join('\n')}\n` : undefined,
    tree: get('tree'),
    parents: headers.filter(([k]) => k === 'parent').map(([, v]) => v),
    author: parsePerson(Buffer.from(get('author'), 'latin1').toString('utf8')),
    committer: parsePerson(Buffer.from(get('committer'), 'latin1').toString('utf8')),
    message: Buffer.from(body, 'latin1').toString('utf8'),
  };
}
