import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ACTION_TYPES, adapterOf } from '../../../runtime/forms/actions/index.js';
import type { DeliveryEvent } from '../../../runtime/forms/deliveries/context.js';
import type { ActionTypeName } from '../../../runtime/forms/actions/adapter.js';

test('every action type of the spec has its adapter, registered under its own name', () => {
  for (const t of ACTION_TYPES) assert.equal(adapterOf(t).type, t);
});

const EVENTS: DeliveryEvent[] = ['submission.created', 'submission.claimed', 'submission.reminder'];
const TAKES: { name: string; type: ActionTypeName; config: Record<string, unknown>; want: DeliveryEvent[] }[] = [
  { name: 'a webhook without events takes new submissions', type: 'webhook', config: {}, want: ['submission.created'] },
  { name: 'a webhook takes the events it lists', type: 'webhook', config: { events: ['submission.claimed', 'submission.reminder'] }, want: ['submission.claimed', 'submission.reminder'] },
  { name: 'n8n subscribes like a webhook', type: 'n8n', config: { events: ['submission.created', 'submission.claimed'] }, want: ['submission.created', 'submission.claimed'] },
  { name: 'email takes new submissions and reminders', type: 'email', config: {}, want: ['submission.created', 'submission.reminder'] },
  { name: 'a digest takes no event (it runs on its schedule)', type: 'email_digest', config: {}, want: [] },
  ...(['email_template', 'autoreply', 'ntfy', 'slack', 'discord', 'teams', 'telegram', 'sheets'] as const).map((type) =>
    ({ name: `${type} takes new submissions only, whatever its config lists`, type, config: { events: ['submission.claimed'] }, want: ['submission.created'] as DeliveryEvent[] })),
];

for (const row of TAKES) {
  test(`takesEvent: ${row.name}`, () => {
    assert.deepEqual(EVENTS.filter((e) => adapterOf(row.type).takesEvent(row.config, e)), row.want);
  });
}

test('only the webhook adapter signs its deliveries (so only it gets a generated secret)', () => {
  assert.deepEqual(ACTION_TYPES.filter((t) => adapterOf(t).signsDeliveries), ['webhook']);
});

test('no code outside runtime/forms/actions/ branches on an action type name', () => {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../runtime/forms');
  const files: string[] = [];
  const walk = (d: string) => { for (const f of readdirSync(d)) { const p = path.join(d, f); if (statSync(p).isDirectory()) walk(p); else if (p.endsWith('.ts')) files.push(p); } };
  walk(root);
  const names = ACTION_TYPES.join('|');
  const branch = new RegExp(`case '(${names})'|\\.type === '(${names})'|type === '(${names})'`);
  const found = files.filter((f) => !f.includes(`${path.sep}actions${path.sep}`) && branch.test(readFileSync(f, 'utf8'))).map((f) => path.relative(root, f));
  // schema-check.ts switches over expected-field types (`email` among them), not action types
  assert.deepEqual(found.filter((f) => f !== path.join('intake', 'schema-check.ts')), []);
});
