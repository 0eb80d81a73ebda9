import type { SubmissionFields } from '../submissions/types.js';
import { fieldPairs } from './context.js';
import type { RenderPool } from './render-pool.js';

export { TemplateError, RenderBusyError } from './template-error.js';

/** What a template sees: `form.name`, `submission.<field>`, `submission_id`, `created_at` and `fields` (name/value pairs in order). */
export function templateVars(form: { id: string; name: string }, data: SubmissionFields, id: number | null, createdAt: string): Record<string, unknown> {
  return { form, submission: data, submission_id: id, created_at: createdAt, fields: fieldPairs(data).map(([name, value]) => ({ name, value })) };
}

/**
 * Renders a tenant's templates (liquid-render.ts) in the render pool, off the main thread
 * (docs/forms.md "Templates"). Each call rejects with TemplateError (the template fails, or passes
 * a limit) or RenderBusyError (the tenant has no room in the pool).
 */
export interface TemplateRenderer {
  /** An HTML body, every output escaped unless `| raw`. */
  html: (tenant: string, source: string, vars: Record<string, unknown>, part?: string) => Promise<string>;
  /** A subject: plain text, newlines folded to spaces (a header is one line). */
  subject: (tenant: string, source: string, vars: Record<string, unknown>, part?: string) => Promise<string>;
}

/** The renderer over one pool. */
export function templateRenderer(pool: RenderPool): TemplateRenderer {
  return {
    html: (tenant, source, vars, part = 'body') => pool.render(tenant, { kind: 'html', part, source, vars }),
    subject: async (tenant, source, vars, part = 'subject') => (await pool.render(tenant, { kind: 'text', part, source, vars })).replace(/[\r\n]+/g, ' ').trim(),
  };
}

/** The text part of an HTML body: tags dropped, entities of the escaper undone. */
export function htmlToText(h: string): string {
  return h.replace(/<br\s*\/?>/gi, '\n').replace(/<\/(p|div|tr|h\d|li)>/gi, '\n').replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&').replace(/\n{3,}/g, '\n\n').trim();
}
