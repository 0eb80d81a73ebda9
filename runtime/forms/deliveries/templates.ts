import { Liquid } from 'liquidjs';
import { GslbError } from '../../errors.js';
import type { SubmissionFields } from '../submissions/types.js';
import { fieldPairs } from './context.js';

/**
 * Liquid for tenants' templates (e-mail actions and /email-template/preview). Nothing a tenant
 * writes reaches the host: no file system (`include` and `render` see an empty in-memory set),
 * own properties only, and limits on parse size, render time and memory. Output is HTML-escaped
 * by default in HTML parts (`{{ x | raw }}` opts out); subjects are plain text on one line.
 */
const OPTIONS = {
  strictFilters: true, ownPropertyOnly: true, relativeReference: false, templates: {},
  parseLimit: 100_000, renderLimit: 1_000, memoryLimit: 10_000_000,
} as const;
const html = new Liquid({ ...OPTIONS, outputEscape: 'escape' });
const text = new Liquid(OPTIONS);

/** What a template sees: `form.name`, `submission.<field>`, `submission_id`, `created_at` and `fields` (name/value pairs in order). */
export function templateVars(form: { id: string; name: string }, data: SubmissionFields, id: number | null, createdAt: string): Record<string, unknown> {
  return { form, submission: data, submission_id: id, created_at: createdAt, fields: fieldPairs(data).map(([name, value]) => ({ name, value })) };
}

/**
 * A template that does not parse, fails to render, or passes a limit (size, render time, memory):
 * a 400 in an API answer, and a permanent failure of a delivery (`permanent`: the same template
 * fails the same way on every attempt, so it is not retried; docs/forms.md "Deliveries").
 */
export class TemplateError extends GslbError {
  readonly permanent = true;
  constructor(message: string, cause: unknown) {
    super('API_BAD_REQUEST', message, { cause });
  }
}

/** The line and column of a Liquid error, when it has them. */
function where(err: unknown): string {
  const m = /line:(\d+), col:(\d+)/.exec((err as Error).message);
  return m ? ` at line ${m[1]}, column ${m[2]}` : '';
}

/** Renders one template; a template that does not parse or fails to render is a {@link TemplateError} naming the part and the line. */
async function render(engine: Liquid, part: string, source: string, vars: Record<string, unknown>): Promise<string> {
  try {
    return await engine.parseAndRender(source, vars);
  } catch (err) {
    const first = (err as Error).message.split('\n')[0]!.replace(/, line:\d+, col:\d+/, '');
    throw new TemplateError(`${part}: template error${where(err)}: ${first}`, err);
  }
}

/** An HTML body, every output escaped unless `| raw`. */
export const renderHtml = (source: string, vars: Record<string, unknown>, part = 'body') => render(html, part, source, vars);

/** A subject: plain text, newlines folded to spaces (a header is one line). */
export async function renderSubject(source: string, vars: Record<string, unknown>, part = 'subject'): Promise<string> {
  return (await render(text, part, source, vars)).replace(/[\r\n]+/g, ' ').trim();
}

/** The text part of an HTML body: tags dropped, entities of the escaper undone. */
export function htmlToText(h: string): string {
  return h.replace(/<br\s*\/?>/gi, '\n').replace(/<\/(p|div|tr|h\d|li)>/gi, '\n').replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&').replace(/\n{3,}/g, '\n\n').trim();
}
