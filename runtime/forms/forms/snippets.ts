import type { FormRow } from './rows.js';
import type { SchemaField } from './schema-fields.js';

/** What GET /form/{id}/snippets answers: the address visitors post to and two paste-in snippets. */
export interface Snippets {
  form_id: string;
  endpoint: string;
  html: string;
  fetch: string;
}

/** Escapes text for HTML content and double-quoted attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** The fields a snippet shows: the schema's, or an e-mail address and a message when it has none. */
const FALLBACK: readonly SchemaField[] = [
  { name: 'email', type: 'email', required: true, label: 'Email' },
  { name: 'message', type: 'textarea', required: true, label: 'Message' },
];

const INPUT_TYPES = new Set(['text', 'email', 'tel', 'url', 'number', 'date', 'time', 'datetime-local', 'checkbox', 'file', 'hidden', 'password', 'color', 'range']);

/** One labelled control for a schema field. */
function control(f: SchemaField): string {
  const name = escapeHtml(f.name);
  const attrs = `name="${name}"${f.required ? ' required' : ''}${f.maxLength !== undefined ? ` maxlength="${f.maxLength}"` : ''}`;
  const label = escapeHtml(f.label ?? f.name);
  const type = f.type.toLowerCase();
  let input: string;
  if (f.options && f.options.length > 0) {
    input = `<select ${attrs}>${f.options.map((o) => `<option>${escapeHtml(o)}</option>`).join('')}</select>`;
  } else if (type === 'textarea' || type === 'longtext') {
    input = `<textarea ${attrs}></textarea>`;
  } else {
    input = `<input type="${INPUT_TYPES.has(type) ? type : 'text'}" ${attrs}>`;
  }
  return `  <label>${label} ${input}</label>`;
}

/**
 * The form's public address (`<base>/f/<form id>`, base the configured `api.publicURL` or the
 * request's origin) and snippets: an HTML `<form>` posting there, with the form's honeypot field
 * hidden from people (off-screen, out of the tab order, no autofill) so only bots fill it, and a
 * fetch() call that posts the same form without leaving the page. Pure.
 */
export function buildSnippets(form: FormRow, base: string): Snippets {
  const endpoint = `${base.replace(/\/+$/, '')}/f/${encodeURIComponent(form.id)}`;
  const fields = form.schema.fields.length > 0 ? form.schema.fields : FALLBACK;
  const honeypot = escapeHtml(form.honeypot_field);
  const html = [
    `<form action="${escapeHtml(endpoint)}" method="POST"${fields.some((f) => f.type.toLowerCase() === 'file') ? ' enctype="multipart/form-data"' : ''}>`,
    ...fields.map(control),
    `  <input type="text" name="${honeypot}" style="position:absolute;left:-9999px" tabindex="-1" autocomplete="off" aria-hidden="true">`,
    '  <button type="submit">Send</button>',
    '</form>',
  ].join('\n');
  const fetchSnippet = [
    "const form = document.querySelector('form');",
    "form.addEventListener('submit', async (event) => {",
    '  event.preventDefault();',
    `  const res = await fetch(${JSON.stringify(endpoint)}, {`,
    "    method: 'POST',",
    "    headers: { Accept: 'application/json' },",
    '    body: new FormData(form),',
    '  });',
    "  form.replaceChildren(res.ok ? 'Thank you!' : 'Sending failed; please try again.');",
    '});',
  ].join('\n');
  return { form_id: form.id, endpoint, html, fetch: fetchSnippet };
}
