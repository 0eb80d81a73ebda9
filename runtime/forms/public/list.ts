import { badRequest } from '../../errors.js';

/** `page` and `limit` as a query string carries them (forms-api.md §4: strings). */
export interface PageQuery { page?: string | undefined; limit?: string | undefined }

/** A validated page request. */
export interface Page { page: number; limit: number }

/** A page of a list: the items and where they sit (docs/forms.md "The /public/v1 API"). */
export interface PageOf<T> { data: T[]; page: number; limit: number; total: number }

/** Default and largest page size. */
export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

const WHOLE = /^[0-9]{1,9}$/;

/**
 * The page a query asks for: `page` 1-based (default 1), `limit` 1..100 (default 20). Anything
 * else is a 400 naming the parameter and the rule.
 */
export function parsePage(q: PageQuery): Page {
  const page = q.page === undefined ? 1 : WHOLE.test(q.page) ? Number(q.page) : NaN;
  if (!(page >= 1)) throw badRequest('page: must be a whole number >= 1');
  const limit = q.limit === undefined ? DEFAULT_LIMIT : WHOLE.test(q.limit) ? Number(q.limit) : NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT)) throw badRequest(`limit: must be a whole number from 1 to ${MAX_LIMIT}`);
  return { page, limit };
}

/** One page of `items` (already in order); a page past the end is empty. */
export function paginate<T>(items: readonly T[], p: Page): PageOf<T> {
  const start = (p.page - 1) * p.limit;
  return { data: items.slice(start, start + p.limit), page: p.page, limit: p.limit, total: items.length };
}
