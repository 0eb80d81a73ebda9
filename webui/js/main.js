// The dashboard: who is signed in, the snapshot, the live feed, and one view at a time by the URL
// fragment (#overview, #pools, #services, #gitops, #users, #settings).
import { api, get, toLogin } from './api.js';
import { loadSnapshot } from './store.js';
import { startLive } from './live.js';
import { overviewView } from './views/overview.js';
import { poolsView } from './views/pools.js';
import { servicesView } from './views/services.js';
import { gitopsView } from './views/gitops.js';
import { usersView, settingsView } from './views/admin.js';

const $ = (id) => document.getElementById(id);

/** Status line under the header (polite live region). */
export function say(msg, error = false) {
  const s = $('status');
  s.textContent = msg;
  s.className = error ? 'error' : '';
}

// ---- theme: the system's preference until the toggle is used, then the remembered choice ----
const media = matchMedia('(prefers-color-scheme: dark)');
const themeNow = () => document.documentElement.dataset.theme || (media.matches ? 'dark' : 'light');
function showTheme() {
  const dark = themeNow() === 'dark';
  $('theme').setAttribute('aria-pressed', String(dark));
  $('theme').textContent = 'Dark theme';
}
$('theme').addEventListener('click', () => {
  const next = themeNow() === 'dark' ? 'light' : 'dark';
  document.documentElement.dataset.theme = next;
  try { localStorage.setItem('gslb-theme', next); } catch { /* not remembered */ }
  showTheme();
});
media.addEventListener('change', showTheme);
showTheme();

$('logout').addEventListener('click', async () => {
  await api('POST', '/auth/logout');
  location.assign('/ui/login');
});

// ---- views ----
const VIEWS = ['overview', 'pools', 'services', 'gitops', 'users', 'settings'];
let views = {};
let current = null;

function route() {
  let name = location.hash.slice(1) || 'overview';
  const link = document.querySelector(`#nav a[data-view="${name}"]`);
  if (!VIEWS.includes(name) || !link || link.parentElement.hidden) name = 'overview';
  for (const v of VIEWS) $(`view-${v}`).hidden = v !== name;
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.dataset.view === name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  if (current && current !== name) views[current].hide?.();
  const changed = current !== name;
  current = name;
  views[name].show();
  if (changed) document.title = `${link ? link.textContent : 'Overview'} · gslbd`;
}

async function main() {
  const who = await api('GET', '/auth/me');
  if (who.status !== 200) { if (who.status !== 401) toLogin(); return; }
  const me = who.body;
  const perms = new Set(me.permissions);
  $('who').textContent = me.email || (me.kind === 'dev' ? 'dev mode' : me.kind === 'system' ? 'system key' : me.kind);
  for (const li of document.querySelectorAll('#nav li[data-perm]')) li.hidden = !perms.has(li.dataset.perm);
  const ctx = { me, perms, say };
  views = {
    overview: overviewView(ctx), pools: poolsView(ctx), services: servicesView(ctx),
    gitops: gitopsView(ctx), users: usersView(ctx), settings: settingsView(ctx),
  };
  addEventListener('hashchange', () => { route(); $('main').focus({ preventScroll: true }); });
  let first = true;
  const live = $('live');
  await startLive({
    onOpen: async () => {
      loadSnapshot(await get('/snapshot'));
      if (first) { first = false; route(); }
    },
    onState: (s) => {
      live.dataset.state = s;
      live.textContent = s === 'open' ? 'Live' : s === 'closed' ? 'Disconnected: reconnecting' : 'Connecting…';
    },
    onOther: (msg) => { for (const v of Object.values(views)) v.message?.(msg); },
  });
}

main().catch((err) => say(`The dashboard could not start: ${err.message}`, true));
