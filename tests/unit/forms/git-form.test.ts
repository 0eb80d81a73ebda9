import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadManifests } from '../../../gitops/load/index.js';
import { fieldPath } from '../../../runtime/forms/kind.js';
import '../../../runtime/kinds-all.js';
import { sortProblems, validateManifests } from '../../../gitops/validate/validate.js';
import { planChanges } from '../../../core/plan/plan.js';
import { emptySnapshot, nextSnapshot } from '../../../core/snapshot/snapshot.js';
import { DEFAULT_SETTINGS } from '../../../runtime/forms/forms/settings.js';

const form = (name: string, spec: string) => `apiVersion: gslb/v1\nkind: Form\nmetadata:\n  name: ${name}\nspec:\n${spec}`;

function check(files: Record<string, string>) {
  const l = loadManifests(Object.entries(files).map(([path, text]) => ({ path, text })));
  const v = validateManifests(l.manifests);
  return { problems: sortProblems([...l.problems, ...v.problems]), desired: v.desired };
}

const CONTACT = form('contact', [
  '  name: Contact us',
  '  allowed_domains: [example.com]',
  '  success_redirect: /thanks',
  '  schema:',
  '    fields:',
  '      - {name: email, type: email, required: true}',
  '    enforce: true',
  '  actions:',
  '    - type: slack',
  '      config: {webhook_url: "https://hooks.slack.com/services/T/B/X"}',
  '    - type: email',
  '      name: Team',
  '      config: {to: team@example.com}',
  '      conditions: [{field: topic, op: equals, value: sales}]',
  '',
].join('\n'));

test('kind Form maps to a form row (the API\'s defaults) and an action row per spec.actions, children of the form', () => {
  const { problems, desired } = check({ 'forms/contact.yaml': CONTACT });
  assert.deepEqual(problems, []);
  assert.deepEqual(desired.map((d) => `${d.kind}:${d.key}`), ['form:contact', 'formaction:contact#0', 'formaction:contact#1']);
  assert.deepEqual(desired[0]!.fields, {
    ...DEFAULT_SETTINGS, name: 'Contact us', allowed_domains: ['example.com'], success_redirect: '/thanks',
    schema: { fields: [{ name: 'email', type: 'email', required: true }], enforce: true }, createdAt: null, updatedAt: null,
  });
  assert.deepEqual(desired[2]!.fields, {
    type: 'email', name: 'Team', enabled: true, config: { to: 'team@example.com' }, conditions: [{ field: 'topic', op: 'equals', value: 'sales' }],
    conditions_mode: 'all', createdAt: null, updatedAt: null,
  });
  assert.deepEqual(desired[1]!.refs, [{ field: 'formId', kind: 'form', key: 'contact' }]);
  assert.equal(desired[1]!.source, 'forms/contact.yaml');
  const { desired: plain } = check({ 'f.yaml': form('signup', '  group: web\n') });
  assert.equal(plain[0]!.fields.name, 'signup', 'spec.name defaults to metadata.name');
});

test('kind Form: the same plan path as every kind; pruned with its actions when the manifest goes', () => {
  const { desired } = check({ 'forms/contact.yaml': CONTACT });
  let n = 0;
  const plan = planChanges({ desired, actual: emptySnapshot(), revision: 'c1', newId: () => `id${++n}`, tenantId: 'default' });
  assert.deepEqual(plan.changes.map((c) => `${c.op} ${c.label}`), ['create form "Contact us"', 'create slack action of form id1', 'create email action of form id1']);
  const s = nextSnapshot(emptySnapshot(), plan.changes.map((c) => ({ op: 'put' as const, row: c.after! })), 'c1', 0);
  assert.deepEqual(planChanges({ desired, actual: s, revision: 'c2', newId: () => 'x', tenantId: 'default' }).changes, [], 'no change, no plan');
  const gone = planChanges({ desired: [], actual: s, revision: 'c3', newId: () => 'x', tenantId: 'default', safety: { maxChangePercent: 100, minExisting: 100 } });
  assert.deepEqual(gone.counts, { create: 0, update: 0, delete: 3 });
});

test('kind Form problems, each at its file and line: the schema, then the rules the API applies', () => {
  const rows: { name: string; spec: string; want: string[] }[] = [
    { name: 'unknown setting', spec: '  colour: red\n', want: ['f.yaml:6:3: spec.colour = "red": unknown key "colour"'] },
    { name: 'score above 1', spec: '  recaptcha_min_score: 2\n', want: ['f.yaml:6:24: spec.recaptcha_min_score = 2: must be <= 1'] },
    { name: 'redirect', spec: '  success_redirect: thanks\n', want: ['f.yaml:6:21: spec.success_redirect = "thanks": must be an http or https URL or a path starting with /'] },
    { name: 'honeypot', spec: '  honeypot_field: my trap\n', want: ['f.yaml:6:19: spec.honeypot_field = "my trap": must be letters, digits or _ . - [ ]'] },
    { name: 'blocked IP', spec: '  blocked_ips: [10.0.0.1, nope]\n', want: ['f.yaml:6:27: spec.blocked_ips.1 = "nope": "nope" is neither an IP address nor a CIDR range'] },
    { name: 'schema names twice', spec: '  schema:\n    fields:\n      - {name: a, type: text, required: true}\n      - {name: a, type: text, required: false}\n', want: ['f.yaml:9:16: spec.schema.fields.1.name = "a": "a" is already the name of fields[0]'] },
    { name: 'action config', spec: '  actions:\n    - {type: slack, config: {}}\n', want: ['f.yaml:7:29: spec.actions.0.config.webhook_url = (unset): required for type slack'] },
    { name: 'action condition', spec: '  actions:\n    - type: slack\n      config: {webhook_url: "https://hooks.slack.com/x"}\n      conditions: [{field: n, op: gt, value: many}]\n', want: ['f.yaml:9:46: spec.actions.0.conditions.0.value = "many": must be a number with op gt'] },
    { name: 'action type', spec: '  actions:\n    - {type: pigeon, config: {}}\n', want: ['f.yaml:7:14: spec.actions.0.type = "pigeon": must be one of'] },
  ];
  for (const r of rows) {
    const { problems } = check({ 'f.yaml': form('f', r.spec) });
    assert.equal(problems.length, r.want.length, `${r.name}: ${JSON.stringify(problems)}`);
    r.want.forEach((w, i) => assert.ok(problems[i]!.startsWith(w), `${r.name}: got ${problems[i]}, want ${w}`));
  }
});

test('problem fields become manifest paths', () => {
  assert.deepEqual(fieldPath('blocked_ips[1]'), ['blocked_ips', 1]);
  assert.deepEqual(fieldPath('config.webhook_url'), ['config', 'webhook_url']);
  assert.deepEqual(fieldPath('conditions[0].value'), ['conditions', 0, 'value']);
  assert.deepEqual(fieldPath('name'), ['name']);
});
