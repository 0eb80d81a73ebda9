import type { SubmissionFields } from '../../submissions/types.js';

/** A link: an http(s) URL, or a bare `www.` host. BBCode `[url=…]…[/url]` holds one URL, counted once. */
const LINK = /\bhttps?:\/\/[^\s<>"'\]]+|(?<![\w./])www\.[a-z0-9-]+\.[^\s<>"'\]]+/gi;
const BBCODE_TEXT = /\[url=[^\]]*\][^[]*\[\/url\]/gi;

/** Links in one value; a BBCode link's text does not count again. */
function linksIn(value: string): number {
  if (!/https?:|www\./i.test(value)) return 0;
  const plain = value.replace(BBCODE_TEXT, (m) => m.slice(0, m.indexOf(']') + 1));
  return plain.match(LINK)?.length ?? 0;
}

/** How many links a submission carries, across every value of every field. Pure. */
export function countLinks(fields: SubmissionFields): number {
  let n = 0;
  for (const v of Object.values(fields)) {
    if (Array.isArray(v)) for (const x of v) n += linksIn(x);
    else n += linksIn(v);
  }
  return n;
}

/** Spam when a submission carries more than `max` links; `max` 0 switches the check off. */
export function linksReason(fields: SubmissionFields, max: number): string | null {
  if (max === 0) return null;
  const n = countLinks(fields);
  return n > max ? `${n} links (at most ${max} allowed)` : null;
}
