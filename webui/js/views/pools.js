// Pools and their members with live health. Each member row is found through a map from
// pool/IP to its rows, so a health_update touches only those rows; structure changes re-render
// only the pools they concern. Sections off-screen skip layout (content-visibility in app.css),
// which is what makes 1,000 pools of 10 members render in well under a second.
import { api } from '../api.js';
import { h, pct } from '../dom.js';
import { healthOf, hkey, on, store } from '../store.js';

const HEADS = ['Address', 'Weight', 'Priority', 'State', 'Health', 'Score', 'RTT'];

/** The tag after a pool's name saying who owns it: git (the manifest in the title) or the config file (read-only). */
function originTag(pool) {
  if (pool.origin === 'git') return h('span', { class: 'tag', title: pool.source || '', text: 'git' });
  if (pool.origin === 'config') return h('span', { class: 'tag', title: `read-only: ${pool.source} in the config file`, text: 'config file' });
  return null;
}

/** What a config pool is (docs/ui.md "The static pool"): the endpoints DNS answers dns.domain with. */
const CONFIG_NOTE = 'The config file\'s static endpoints (loadbalancer.endpoints), answered for dns.domain and the names under it and probed with its health block. Read-only: change them in the config file.';

export function poolsView({ perms, say }) {
  const list = document.getElementById('pool-list');
  const filter = document.getElementById('pool-filter');
  const count = document.getElementById('pool-count');
  const announce = document.getElementById('announce');
  const canWrite = perms.has('pools:write');
  /** hkey → member rows (two members of a pool may share an IP: one health state) */
  let rows = new Map();
  /** pool id → its section and the counts element */
  let sections = new Map();
  let rendered = false;
  let stale = true;
  let visible = false;
  let seq = 0;

  // one template row, cloned per member: far cheaper than building each cell; the buttons share
  // one click listener on the list (a closure per row would cost as much as the row)
  const tpl = h('tr', { class: 'member' }, ...HEADS.map((_, i) => h('td', { class: i >= 1 && i !== 3 && i !== 4 ? 'num' : null })),
    canWrite ? h('td', null, h('button', { type: 'button', class: 'secondary small' })) : null);
  tpl.cells[4].append(h('span', { class: 'badge' }));
  const byId = new Map();

  function paintHealth(tr, e) {
    const health = e.healthy ? 'healthy' : 'unhealthy';
    tr.setAttribute('data-health', health);
    tr.cells[4].firstChild.textContent = tr.getAttribute('data-enabled') === 'false' ? 'disabled' : health;
    tr.cells[5].textContent = pct(e.score);
    tr.cells[6].textContent = e.rttMs ? `${e.rttMs} ms` : '—';
  }

  function memberRow(pool, m, keys) {
    const tr = tpl.cloneNode(true);
    const addr = m.ipAddress.includes(':') ? `[${m.ipAddress}]:${m.port}` : `${m.ipAddress}:${m.port}`;
    tr.setAttribute('data-member-id', m.id);
    tr.setAttribute('data-ip', m.ipAddress);
    tr.setAttribute('data-enabled', m.enabled ? 'true' : 'false');
    const c = tr.cells;
    c[0].textContent = addr;
    c[1].textContent = m.weight;
    c[2].textContent = m.priority || '—';
    c[3].textContent = m.enabled ? 'enabled' : 'disabled';
    paintHealth(tr, healthOf(pool.id, m.ipAddress));
    if (canWrite) {
      const b = c[7].firstChild;
      if (m.origin !== 'api') b.remove();
      else {
        b.textContent = m.enabled ? 'Disable' : 'Enable';
        b.setAttribute('aria-label', `${b.textContent} member ${addr} of ${pool.name}`);
        byId.set(m.id, m);
      }
    }
    const k = hkey(pool.id, m.ipAddress);
    keys.add(k);
    const same = rows.get(k);
    if (same) same.push(tr); else rows.set(k, [tr]);
    return tr;
  }

  list.addEventListener('click', (ev) => {
    const b = ev.target.closest('tr.member button');
    const m = b && byId.get(b.closest('tr').getAttribute('data-member-id'));
    if (m) toggle(m);
  });

  async function toggle(m) {
    const r = await api('PUT', `/members/${encodeURIComponent(m.id)}`, { enabled: !m.enabled });
    if (r.status === 200) say(`Member ${m.ipAddress}:${m.port} ${r.body.enabled ? 'enabled' : 'disabled'}.`);
    else say((r.body && r.body.error) || `Change failed (${r.status})`, true);
  }

  function countsText(pool) {
    const members = store.members.get(pool.id) || [];
    let up = 0;
    let on = 0;
    for (const m of members) if (m.enabled) { on++; if (healthOf(pool.id, m.ipAddress).healthy) up++; }
    return [`${up} of ${on} enabled members healthy`, up < on];
  }

  function paintCounts(poolId) {
    const s = sections.get(poolId);
    const pool = store.pools.get(poolId);
    if (!s || !pool) return;
    const [text, bad] = countsText(pool);
    s.counts.textContent = text;
    s.counts.toggleAttribute('data-bad', bad);
  }

  function poolSection(pool) {
    const id = `pool-h-${++seq}`;
    const counts = h('span', { class: 'counts' });
    const members = store.members.get(pool.id) || [];
    const tbody = document.createElement('tbody');
    const keys = new Set();
    for (const m of members) tbody.append(memberRow(pool, m, keys));
    const heads = canWrite ? [...HEADS, 'Actions'] : HEADS;
    const section = h('section', { class: 'pool', 'aria-labelledby': id, 'data-pool-id': pool.id },
      h('h2', { id }, h('span', { text: pool.name }), counts, originTag(pool)),
      pool.origin === 'config' ? h('p', { class: 'muted', text: CONFIG_NOTE }) : null,
      members.length === 0 ? h('p', { class: 'muted', text: 'No members.' }) : h('table', null,
        h('caption', { class: 'sr-only', text: `Members of ${pool.name}` }),
        h('thead', null, h('tr', null, ...heads.map((t) => h('th', { scope: 'col', text: t })))), tbody));
    sections.set(pool.id, { section, counts, keys, name: pool.name.toLowerCase() });
    paintCounts(pool.id);
    return section;
  }

  function applyFilter() {
    const q = filter.value.trim().toLowerCase();
    let shown = 0;
    for (const s of sections.values()) {
      const hide = q !== '' && !s.name.includes(q);
      s.section.hidden = hide;
      if (!hide) shown++;
    }
    const n = (k) => `${k} pool${k === 1 ? '' : 's'}`;
    count.textContent = q ? `${shown} of ${n(sections.size)}` : n(sections.size);
  }

  /**
   * Builds every pool's section in slices of about 12 ms, yielding between them, so the first
   * screen shows at once and the page keeps answering input (and health updates) while the rest
   * is added. Marks: `gslb:pools-first` (first slice painted; its detail.pools says how many pools
   * it held) and `gslb:pools-render` (all of it).
   */
  let building = 0;
  function renderAll() {
    const gen = ++building;
    performance.mark('gslb:pools:start');
    rows = new Map();
    sections = new Map();
    byId.clear();
    list.replaceChildren();
    delete list.dataset.rendered;
    const pools = [...store.pools.values()];
    if (pools.length === 0) list.append(h('p', { class: 'muted', text: 'No pools yet.' }));
    rendered = true;
    stale = false;
    let i = 0;
    const afterPaint = (fn) => requestAnimationFrame(() => setTimeout(fn));
    // postTask where the browser has it: setTimeout's nesting clamp would add 4 ms per slice
    const later = globalThis.scheduler?.postTask ? (fn) => scheduler.postTask(fn) : (fn) => setTimeout(fn);
    const slice = () => {
      if (gen !== building) return;
      const first = i === 0;
      const until = performance.now() + 12;
      const frag = document.createDocumentFragment();
      while (i < pools.length && performance.now() < until) frag.append(poolSection(pools[i++]));
      list.append(frag);
      applyFilter();
      if (first) {
        const shown = sections.size;
        afterPaint(() => performance.measure('gslb:pools-first', { start: 'gslb:pools:start', detail: { pools: shown } }));
      }
      if (i < pools.length) { later(slice); return; }
      afterPaint(() => {
        if (gen !== building) return;
        performance.mark('gslb:pools:end');
        performance.measure('gslb:pools-render', 'gslb:pools:start', 'gslb:pools:end');
        list.dataset.rendered = String(sections.size);
      });
    };
    slice();
  }

  function renderPools(ids) {
    for (const id of ids) {
      const old = sections.get(id);
      // forget the old section's rows before the new one registers its own
      if (old) for (const k of old.keys) rows.delete(k);
      const pool = store.pools.get(id);
      if (!pool) { old?.section.remove(); sections.delete(id); continue; }
      const fresh = poolSection(pool);
      if (old) old.section.replaceWith(fresh); else list.append(fresh);
    }
    applyFilter();
  }

  on('structure', (ids) => {
    const inBuild = list.dataset.rendered === undefined;
    if (!visible || ids === null || !rendered || inBuild) { stale = true; if (visible) renderAll(); return; }
    renderPools(ids);
  });

  on('health', (keys) => {
    let down = 0;
    let up = 0;
    const pools = new Set();
    for (const k of keys) {
      const trs = rows.get(k);
      const e = store.health.get(k);
      if (!trs || !e) continue;
      for (const tr of trs) {
        const was = tr.getAttribute('data-health');
        paintHealth(tr, e);
        if (was !== tr.getAttribute('data-health')) { if (e.healthy) up++; else down++; }
      }
      pools.add(k.slice(0, k.indexOf('\n')));
    }
    for (const id of pools) paintCounts(id);
    if (visible && (up || down)) announce.textContent = `${down} member${down === 1 ? '' : 's'} turned unhealthy, ${up} recovered.`;
  });

  let timer = 0;
  filter.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(applyFilter, 120); });

  return {
    show() { visible = true; if (stale || !rendered) renderAll(); },
    hide() { visible = false; },
  };
}
