// DOM helpers. Text from the API only ever goes in through text nodes and attributes set one by
// one: no innerHTML anywhere, so a pool named `<img onerror=…>` is shown, not run.

/**
 * Creates an element. `attrs`: `class`, `text`, `on` (event name → handler), booleans (present
 * when true), anything else as an attribute. Children: nodes, strings (text nodes), null skipped.
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = v;
      else if (k === 'on') for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

/** A table with a caption (for screen readers), one header row and rows of cells (strings or nodes). */
export function table(caption, heads, rows) {
  return h('table', null,
    h('caption', { class: 'sr-only', text: caption }),
    h('thead', null, h('tr', null, ...heads.map((t) => h('th', { scope: 'col', text: t })))),
    h('tbody', null, ...rows.map((cells) => h('tr', null, ...cells.map((c) => h('td', null, c ?? ''))))));
}

/** A definition list of [term, value] pairs. */
export function kv(pairs, cls = 'kv') {
  const dl = h('dl', { class: cls });
  for (const [k, v] of pairs) dl.append(h('dt', { text: k }), h('dd', null, v ?? '—'));
  return dl;
}

/** Seconds or milliseconds since the epoch as a local date and time; '—' for none. */
export function when(t, unit = 'ms') {
  if (!t) return '—';
  return new Date(unit === 's' ? t * 1000 : t).toLocaleString();
}

/** A score 0..1 as a percentage. */
export const pct = (s) => (typeof s === 'number' ? `${Math.round(s * 100)} %` : '—');
