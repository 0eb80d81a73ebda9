import { Liquid } from 'liquidjs';

/**
 * Liquid for tenants' templates (e-mail actions and /email-template/preview), as the render
 * worker threads run it (render-worker.ts). Nothing a tenant writes reaches the host: no file
 * system (`include` and `render` see an empty in-memory set), own properties only. liquidjs's own
 * limits on parse size, render time and memory are the first line; the render pool's wall-clock
 * limit (render-pool.ts) is the second, for work inside one filter call that liquidjs does not
 * interrupt. `html` escapes every output by default (`{{ x | raw }}` opts out); `text` does not.
 */
const OPTIONS = {
  strictFilters: true, ownPropertyOnly: true, relativeReference: false, templates: {},
  parseLimit: 100_000, renderLimit: 1_000, memoryLimit: 10_000_000,
} as const;
const engines = { html: new Liquid({ ...OPTIONS, outputEscape: 'escape' }), text: new Liquid(OPTIONS) };

/** One render: which engine, the part's name (for messages), the template and what it sees. */
export interface RenderJob { kind: 'html' | 'text'; part: string; source: string; vars: Record<string, unknown> }

/** A render's outcome: the output, or the message of a template that does not parse or fails to render. */
export type RenderOutcome = { ok: true; out: string } | { ok: false; message: string };

/** The line and column of a Liquid error, when it has them. */
function where(err: unknown): string {
  const m = /line:(\d+), col:(\d+)/.exec((err as Error).message);
  return m ? ` at line ${m[1]}, column ${m[2]}` : '';
}

/** Renders one template; never throws: an error is an outcome whose message names the part and the line. */
export async function renderLiquid(job: RenderJob): Promise<RenderOutcome> {
  try {
    return { ok: true, out: await engines[job.kind].parseAndRender(job.source, job.vars) };
  } catch (err) {
    const first = String((err as Error).message).split('\n')[0]!.replace(/, line:\d+, col:\d+/, '');
    return { ok: false, message: `${job.part}: template error${where(err)}: ${first}` };
  }
}
