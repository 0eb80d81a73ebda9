// Administration, read-only: the tenant's users (users:read) and the mail settings (settings:read;
// the password is never sent by the server, only whether one is stored).
import { get } from '../api.js';
import { h, kv, table, when } from '../dom.js';

function loader(id, load) {
  const body = document.getElementById(id);
  return {
    async show() {
      body.replaceChildren(h('p', { class: 'muted', text: 'Loading…' }));
      try { body.replaceChildren(await load()); } catch (err) { body.replaceChildren(h('p', { class: 'error', text: err.message })); }
    },
  };
}

export const usersView = () => loader('users-body', async () => {
  const users = await get('/users');
  return table('Users', ['E-mail', 'Name', 'Role', 'Tenant', 'Sign-in', 'Two-step', 'Created'],
    users.map((u) => [u.email, u.displayName || '—', u.role, u.tenantId, u.auth_provider === 'oidc' ? 'single sign-on' : 'password', u.totpEnabled ? 'on' : 'off', when(u.createdAt, 's')]));
});

export const settingsView = () => loader('settings-body', async () => {
  const m = await get('/settings/smtp');
  return h('div', { class: 'panel' }, h('h2', { text: 'Mail (SMTP)' }), kv([
    ['Source', m.source || '—'], ['Enabled', m.enabled === false ? 'no' : 'yes'], ['Host', m.host || '—'], ['Port', m.port ? String(m.port) : '—'],
    ['From', m.from || '—'], ['Alert recipients', (m.to || []).join(', ') || '—'], ['User name', m.username || '—'],
    ['Password', m.hasPassword ? 'stored (not shown)' : 'none'], ['TLS', m.tls ? 'implicit TLS' : m.startTls ? 'STARTTLS' : 'none'],
  ]));
});
