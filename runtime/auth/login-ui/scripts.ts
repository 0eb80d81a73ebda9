/**
 * Browser script of /ui/login: password, then TOTP when the server answers `mfaRequired`. After
 * signing in it goes to the page named by the query's `next` when that is a page of the dashboard (a path under /ui/, never
 * another origin), else to the dashboard, keeping the URL fragment (the dashboard's view).
 */
export const LOGIN_JS = `'use strict';
const $ = (id) => document.getElementById(id);
function nextPage() {
  const n = new URLSearchParams(location.search).get('next') || '';
  return /^\\/ui\\/[^/\\\\]*$/.test(n) && !n.startsWith('/ui/login') ? n : '/ui/';
}
const status = (msg, error) => { const s = $('status'); s.textContent = msg; s.className = error ? 'error' : ''; };
async function post(path, body) {
  const res = await fetch('/api/v1' + path, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  let data = {};
  try { data = await res.json(); } catch { /* empty body */ }
  return { status: res.status, data };
}
$('login').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const body = { email: $('email').value, password: $('password').value };
  if (!$('totp').hidden && $('totpCode').value) body.totpCode = $('totpCode').value.trim();
  status('Signing in…');
  const r = await post('/auth/login', body);
  if (r.status === 200) { status('Signed in.'); location.assign(nextPage() + location.hash); return; }
  if (r.data.mfaRequired) {
    $('totp').hidden = false;
    $('totpCode').required = true;
    $('totpCode').focus();
    status(body.totpCode ? (r.data.error || 'Invalid code') : 'Enter the 6-digit code from your authenticator app.', Boolean(body.totpCode));
    return;
  }
  status(r.data.error || 'Sign-in failed (' + r.status + ')', true);
});
$('reset-request').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const r = await post('/auth/password-reset', { email: $('reset-email').value });
  status(r.status === 202 ? 'If the account exists, a reset link is on its way.' : (r.data.error || 'Request failed'), r.status !== 202);
});
const resetToken = new URLSearchParams(location.search).get('reset');
if (resetToken) {
  $('login').hidden = true; $('forgot').hidden = true; $('reset-confirm').hidden = false; $('new-password').focus();
  $('reset-confirm').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const r = await post('/auth/password-reset/confirm', { token: resetToken, password: $('new-password').value });
    if (r.status === 204) { history.replaceState(null, '', '/ui/login'); $('reset-confirm').hidden = true; $('login').hidden = false; status('Password changed. Sign in with the new password.'); }
    else status(r.data.error || 'Reset failed', true);
  });
}
fetch('/api/v1/auth/sso').then((r) => r.json()).then((d) => { if (d.enabled) $('sso').hidden = false; }).catch(() => {});
`;

/** Browser script of /ui/account: shows GET /api/v1/auth/me; signs out. */
export const ACCOUNT_JS = `'use strict';
const $ = (id) => document.getElementById(id);
fetch('/api/v1/auth/me', { credentials: 'same-origin' }).then(async (res) => {
  if (res.status === 401) { location.assign('/ui/login'); return; }
  const me = await res.json();
  $('me-email').textContent = me.email || '(' + me.kind + ')';
  $('me-name').textContent = me.displayName || '—';
  $('me-role').textContent = me.role || 'system';
  $('me-tenant').textContent = me.tenantId || 'all tenants';
  $('me-totp').textContent = me.totpEnabled ? 'on' : 'off';
  $('me-perms').textContent = (me.permissions || []).join(', ');
  $('me').hidden = false;
  $('status').textContent = 'Signed in as ' + (me.email || me.kind) + '.';
}).catch(() => { $('status').textContent = 'Could not load your account.'; });
$('logout').addEventListener('click', async () => {
  await fetch('/api/v1/auth/logout', { method: 'POST', credentials: 'same-origin' });
  location.assign('/ui/login');
});
`;
