// GitOps: the controller's status (revision, signer, condition), the automatic rollback (watch,
// last rollback, pinned-out revisions), the last refused revision with its reasons, the applied
// history, and a plan of manifests against the running state shown as the controller's diff
// (POST /gitops/plan applies nothing). "GitOps not configured" without a repo.
import { api, get } from '../api.js';
import { h, kv, table, when } from '../dom.js';

const short = (sha) => (sha ? sha.slice(0, 12) : '—');

/** The plan text as lines coloured like a unified diff. */
function diff(text) {
  const pre = h('pre', { class: 'diff', tabindex: '0', 'aria-label': 'Plan as a diff' });
  for (const line of text.split('\n')) {
    const cls = line.startsWith('+++') || line.startsWith('---') ? null : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : line.startsWith('@@') ? 'hunk' : null;
    pre.append(cls ? h('span', { class: cls, text: line }) : line, '\n');
  }
  return pre;
}

export function gitopsView({ perms, say }) {
  const body = document.getElementById('gitops-body');
  let visible = false;

  function planForm() {
    const area = h('textarea', { id: 'plan-text', rows: '10', spellcheck: 'false', placeholder: 'apiVersion: gslb/v1\nkind: Pool\n…' });
    const out = h('div', { 'aria-live': 'polite' });
    const form = h('form', { class: 'panel', 'aria-labelledby': 'h-plan' },
      h('h2', { id: 'h-plan', text: 'Plan manifests against the running state' }),
      h('p', { class: 'muted', text: 'Paste every manifest of the repository (several documents separated by ---). Nothing is applied.' }),
      h('label', { for: 'plan-text', text: 'Manifests (YAML)' }), area, h('p', null, h('button', { type: 'submit', text: 'Show plan' })), out);
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const r = await api('POST', '/gitops/plan', { files: [{ path: 'dashboard.yaml', text: area.value }] });
      if (r.status !== 200) { out.replaceChildren(h('p', { class: 'error', text: (r.body && r.body.error) || `Plan failed (${r.status})` })); return; }
      const p = r.body;
      if (!p.valid) { out.replaceChildren(h('p', { class: 'error', text: 'The manifests are invalid:' }), h('ul', null, ...p.problems.map((x) => h('li', null, h('code', { text: x }))))); return; }
      const c = p.plan.counts;
      out.replaceChildren(h('p', { text: `${c.create} to create, ${c.update} to update, ${c.delete} to delete${p.plan.safety.safe ? '' : ` (held back: ${p.plan.safety.message})`}` }),
        p.text ? diff(p.text) : h('p', { class: 'muted', text: 'No changes.' }));
    });
    return form;
  }

  async function render() {
    body.replaceChildren(h('p', { class: 'muted', text: 'Loading…' }));
    let st;
    try { st = await get('/gitops/status'); } catch (err) { body.replaceChildren(h('p', { class: 'error', text: err.message })); return; }
    if (!st.enabled) {
      body.replaceChildren(h('p', { id: 'gitops-off', text: 'GitOps not configured: the daemon has no gitops.repoURL, so every change comes through the API.' }), planForm());
      return;
    }
    const history = await get('/gitops/history?limit=20').catch(() => []);
    const rej = st.recentRejections && st.recentRejections[0];
    const parts = [
      h('div', { class: 'panel' }, kv([
        ['Repository', `${st.repoURL} (${st.branch})`],
        ['Condition', h('span', { class: `ready-${st.ready}`, text: st.ready ? `Ready: ${st.reason}` : `Not ready: ${st.reason}` })],
        ['Message', st.message || '—'],
        ['Current revision', h('code', { text: st.lastAppliedRevision || '—' })],
        ['Applied', when(st.lastAppliedAt)],
        ['Signer', st.lastSigner || '—'],
        ['Branch head', h('code', { text: st.observedRevision || '—' })],
        ['Last plan', st.lastPlan ? `${st.lastPlan.create} created, ${st.lastPlan.update} updated, ${st.lastPlan.delete} deleted` : '—'],
        ['Drift corrected', st.drift.length ? st.drift.join(', ') : 'none'],
      ])),
    ];
    if (!st.ready && st.problems.length) parts.push(h('h2', { text: 'Why the head is not applied' }), h('ul', null, ...st.problems.map((p) => h('li', null, h('code', { text: p })))));
    if (st.pendingPlan) {
      const c = st.pendingPlan.counts;
      parts.push(h('h2', { id: 'pending-plan', text: 'Pending plan (held back)' }),
        h('p', { text: `Revision ${short(st.pendingPlan.revision)} is held back (${st.pendingPlan.reason}): ${c.create} to create, ${c.update} to update, ${c.delete} to delete. A forced reconcile applies it.` }),
        diff(st.pendingPlan.text));
    }
    const rb = st.rollback;
    if (rb && (rb.enabled || rb.lastRollback || rb.pinnedOut.length)) {
      const w = rb.watch;
      const last = rb.lastRollback;
      parts.push(h('h2', { id: 'h-rollback', text: 'Automatic rollback' }), h('div', { class: 'panel', id: 'rollback' }, kv([
        ['Enabled', rb.enabled ? 'yes' : 'no'],
        ['Last good revision', h('code', { text: short(rb.lastGoodRevision) })],
        ['Watching', w ? h('span', null, h('code', { text: short(w.revision) }), ` until ${when(w.until)}${w.last ? ` (healthy ${Math.round(w.last.healthyShare * 100)} %, SERVFAIL ${Math.round(w.last.servfailRate * 1000) / 10} % of ${w.last.queries})` : ''}${w.baselineBreach ? `; already in breach at the apply: ${w.baselineBreach}` : ''}`) : '—'],
        ['Last rollback', last ? h('span', null, h('code', { text: short(last.from) }), last.to ? ' → ' : '', last.to ? h('code', { text: short(last.to) }) : '', ` ${when(last.at)} (${last.result}): ${last.reason}`) : 'none'],
        ['Pinned out', rb.pinnedOut.length ? h('span', null, ...rb.pinnedOut.map((p) => h('code', { text: `${short(p.revision)} ` }))) : 'none'],
      ])));
    }
    if (perms.has('gitops:write')) {
      const btn = h('button', { type: 'button', text: 'Reconcile now' });
      btn.addEventListener('click', async () => {
        btn.disabled = true;
        const r = await api('POST', '/gitops/reconcile', {});
        btn.disabled = false;
        say(r.status === 200 ? `Reconciled: ${r.body.reason}` : (r.body && r.body.error) || `Reconcile failed (${r.status})`, r.status !== 200);
        render();
      });
      parts.push(h('p', null, btn));
    }
    parts.push(h('h2', { text: 'Last refused revision' }), rej ? h('div', { class: 'panel' }, kv([
      ['Revision', h('code', { text: short(rej.sha) })], ['When', when(rej.at)], ['Reason', rej.reason], ['Message', rej.message],
    ]), rej.problems.length ? h('ul', null, ...rej.problems.map((p) => h('li', null, h('code', { text: p })))) : null) : h('p', { class: 'muted', text: 'None.' }));
    parts.push(h('h2', { text: 'History' }), history.length ? table('Applied revisions, newest first', ['Revision', 'Applied', 'Changes', 'Signer', 'Author', 'Message', 'Trigger'],
      history.map((r) => [h('code', { text: short(r.sha) }), when(r.appliedAt), `+${r.creates} ~${r.updates} −${r.deletes}${r.forced ? ' (forced)' : ''}${r.drift ? ' (drift)' : ''}`, r.signerUserId || r.signer || '—', r.author || '—', (r.message || '').split('\n')[0], r.trigger || '—'])) : h('p', { class: 'muted', text: 'No revision applied yet.' }));
    parts.push(planForm());
    body.replaceChildren(...parts);
  }

  return {
    show() { visible = true; render(); },
    hide() { visible = false; },
    message(msg) {
      if (msg.type === 'gitops_rollback') {
        const p = msg.payload;
        say(p.rolledBackTo ? `GitOps revision ${short(p.revision)} rolled back to ${short(p.rolledBackTo)}: ${p.reason}` : `GitOps revision ${short(p.revision)} breached: ${p.reason}`, true);
        if (visible) render();
        return;
      }
      if (msg.type !== 'gitops_rejected') return;
      say(`GitOps refused revision ${short(msg.payload.revision)}: ${msg.payload.reason}`, true);
      if (visible) render();
    },
  };
}
