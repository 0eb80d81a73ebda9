import { escapeHtml } from '../forms/snippets.js';

const STYLE = 'body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.5rem}a{color:#0645ad}';

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">`
    + `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`;
}

/** A link back to the page the visitor came from, when it is a web page. */
function backLink(back: string | null): string {
  return back && /^https?:\/\//i.test(back) ? `<p><a href="${escapeHtml(back)}">Back to the site</a></p>` : '';
}

/** The built-in thank-you page (a form with no `success_redirect`): `GET /f/{form_id}/thanks`. */
export function thanksPage(formName: string, back: string | null): string {
  return page('Thank you', `<h1>Thank you</h1><p>Your submission to ${escapeHtml(formName)} was received.</p>${backLink(back)}`);
}

/** The page a browser is shown when a post is refused: the status and what was wrong. */
export function errorPage(status: number, message: string, back: string | null): string {
  return page('Submission not accepted', `<h1>Submission not accepted</h1><p>${escapeHtml(message)}</p><p><small>HTTP ${status}</small></p>${backLink(back)}`);
}

/**
 * Where a browser goes after a post: the form's `success_redirect` (a path like `/thanks` is on
 * the posting site, so it is resolved against the page's origin, or against this server's own
 * origin when the post named none), else the built-in thank-you page.
 */
export function nextUrl(successRedirect: string, formId: string, page: string | null, self: string): string {
  if (successRedirect === '') return `${self}/f/${encodeURIComponent(formId)}/thanks`;
  if (successRedirect.startsWith('/')) return new URL(successRedirect, page ?? self).href;
  return successRedirect;
}
