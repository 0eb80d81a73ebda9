// Overview: the dashboard statistics (GET /dashboard/stats, then the feed's stats_update) and the
// latest health changes.
import { h, when } from '../dom.js';
import { on, store } from '../store.js';

const CARDS = [
  ['totalPools', 'Pools'], ['totalMembers', 'Members'], ['healthyMembers', 'Healthy members', 'ok'],
  ['unhealthyMembers', 'Unhealthy members', 'bad'], ['totalServices', 'Services'], ['totalGeoRules', 'Geo rules'],
  ['webSocketClients', 'Live dashboards'], ['uptimeSeconds', 'Uptime'],
];

const uptime = (s) => (s >= 86400 ? `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h` : s >= 3600 ? `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min` : `${Math.floor(s / 60)} min`);

export function overviewView() {
  const dl = document.getElementById('stats');
  const recent = document.getElementById('recent');
  let visible = false;
  function render() {
    if (!visible) return;
    const s = store.stats || {};
    dl.replaceChildren(...CARDS.map(([k, label, tone]) => h('div', { class: tone === 'bad' && s[k] > 0 ? 'bad' : tone === 'ok' ? 'ok' : null, 'data-stat': k },
      h('dt', { text: label }), h('dd', { text: k === 'uptimeSeconds' ? uptime(s[k] || 0) : String(s[k] ?? '—') }))));
    recent.replaceChildren(...(store.recent.length ? store.recent.map((r) => h('li', null,
      h('span', { class: r.healthy ? 'ready-true' : 'ready-false', text: r.healthy ? 'up' : 'down' }), ' ',
      `${r.ip} in ${(store.pools.get(r.poolId) || { name: r.poolId }).name} at ${when(r.at)}`)) : [h('li', { class: 'muted', text: 'None since the page was opened.' })]));
  }
  on('stats', render);
  on('health', render);
  return { show() { visible = true; render(); }, hide() { visible = false; } };
}
