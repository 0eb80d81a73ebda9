// Services: name, domain, algorithm, filter chain and pool; and a simulated query
// (POST /simulate) with each step's decision.
import { api } from '../api.js';
import { h, table } from '../dom.js';
import { on, store } from '../store.js';

export function servicesView({ say }) {
  const box = document.getElementById('service-table');
  const form = document.getElementById('simulate');
  const select = document.getElementById('sim-name');
  const result = document.getElementById('sim-result');
  let visible = false;

  function render() {
    if (!visible) return;
    const poolName = (id) => (id ? (store.pools.get(id) || { name: id }).name : '—');
    box.replaceChildren(store.services.length === 0 ? h('p', { class: 'muted', text: 'No services yet.' }) : table('Services',
      ['Name', 'Domain', 'Algorithm', 'Chain', 'Pool', 'TTL', 'When all unhealthy', 'Owner'],
      store.services.map((s) => [s.name, s.domain, s.algorithm, s.chain && s.chain.length ? s.chain.join(' → ') : '—', poolName(s.poolId), `${s.ttl} s`, s.whenAllUnhealthy, s.origin])));
    const keep = select.value;
    select.replaceChildren(...store.services.map((s) => h('option', { value: s.domain, text: `${s.name} (${s.domain})` })));
    if (keep) select.value = keep;
  }

  function showResult(r) {
    const answers = r.answers.map((a) => `${a.name} ${a.ttl} ${a.type} ${typeof a.data === 'string' ? a.data : JSON.stringify(a.data)}`);
    result.replaceChildren(h('div', { class: 'panel' },
      h('p', null, 'Answer ', h('strong', { text: r.rcode }), r.ecsScope !== null ? ` (ECS scope /${r.ecsScope})` : ''),
      answers.length ? h('ul', null, ...answers.map((a) => h('li', null, h('code', { text: a })))) : h('p', { class: 'muted', text: 'No answer records.' }),
      h('h3', { text: 'Steps' }),
      h('ol', { class: 'steps' }, ...r.steps.map((s) => h('li', null,
        h('strong', { text: s.step }), ': ', h('code', { text: s.input.join(', ') || '∅' }), ' → ', h('code', { text: s.output.join(', ') || '∅' }),
        h('br'), h('span', { class: 'muted', text: s.reason }))))));
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const body = { name: select.value, clientIp: document.getElementById('sim-client').value.trim(), type: document.getElementById('sim-type').value };
    const ecs = document.getElementById('sim-ecs').value.trim();
    if (ecs) body.ecsSubnet = ecs;
    result.replaceChildren(h('p', { text: 'Simulating…' }));
    const r = await api('POST', '/simulate', body);
    if (r.status === 200) showResult(r.body);
    else { result.replaceChildren(); say((r.body && r.body.error) || `Simulation failed (${r.status})`, true); }
  });

  on('services', render);
  on('structure', render);
  return { show() { visible = true; render(); }, hide() { visible = false; } };
}
