import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { getRow } from '../../core/snapshot/snapshot.js';
import type { FormActionRow } from '../../runtime/forms/forms/rows.js';
import { addFormKey, publicClient } from './forms-fixture.js';

// Actions, action types and the plan over /public/v1 (forms-api.md §2, §4, §8; docs/forms.md).

let d: TestDaemon;
let workspaces = 0;
const workspace = (tenantId = `ws${++workspaces}`) => publicClient(d, addFormKey(d, { tenantId }).key);

before(async () => {
  d = await startTestDaemon({
    forms: {
      tiers: {
        starter: { forms: 2, actionsPerForm: 1, submissionsPerMonth: 50, fileBytes: 1000, features: [] },
        team: { forms: 20, actionsPerForm: 5, submissionsPerMonth: 5000, fileBytes: 2000000, features: ['recaptcha', 'customDomains'] },
      },
      defaultTier: 'team',
      tenantTiers: { small: 'starter' },
    },
  } as never);
});
after(async () => { await d?.stop(); });

test('GET /action-types: the 12 types, their config keys (required, secret) and an example each', async () => {
  const r = await workspace()('GET', '/action-types');
  assert.equal(r.status, 200);
  const types = r.body.data as { type: string; config: { key: string; required: boolean; secret: boolean }[]; example: object }[];
  assert.deepEqual(types.map((t) => t.type), ['email', 'email_template', 'autoreply', 'email_digest', 'webhook', 'ntfy', 'n8n', 'slack', 'discord', 'teams', 'telegram', 'sheets']);
  const slack = types.find((t) => t.type === 'slack')!;
  assert.deepEqual(slack.config.map((k) => [k.key, k.required, k.secret]), [['webhook_url', true, true]]);
  for (const t of types) assert.ok(Object.keys(t.example).length > 0, t.type);
});

test('POST /form/{id}/action: 201 with the defaults; secrets masked when returned and listed, stored as sent', async () => {
  const call = workspace();
  const form = (await call('POST', '/form', { name: 'Contact' })).body.id as string;
  const created = await call('POST', `/form/${form}/action`, { form_id: form, type: 'webhook', config: { url: 'https://example.com/hook', secret: 's3cret', headers: { Authorization: 'Bearer t' } } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const { id, created_at, updated_at, ...rest } = created.body;
  assert.match(created_at, /^\d{4}-/);
  assert.equal(updated_at, created_at);
  assert.deepEqual(rest, {
    form_id: form, type: 'webhook', name: null, enabled: true, config: { url: 'https://example.com/hook', secret: '********', headers: '********' },
    conditions: [], conditions_mode: 'all', paused_at: null, pause_reason: null, warnings: [], origin: 'api',
  });
  const stored = getRow<FormActionRow>(d.core.holder.current, 'formaction', id as string)!;
  assert.deepEqual(stored.config, { url: 'https://example.com/hook', secret: 's3cret', headers: { Authorization: 'Bearer t' } });
  const second = await call('POST', `/form/${form}/action`, {
    form_id: form, type: 'telegram', name: 'Team chat', enabled: false, config: { bot_token: '123:abc', chat_id: '-100' },
    conditions: [{ field: 'topic', op: 'equals', value: 'sales' }, { field: 'phone', op: 'not_empty' }], conditions_mode: 'any',
  });
  assert.equal(second.status, 201);
  const list = await call('GET', `/form/${form}/action`);
  assert.deepEqual([list.status, list.body.total, list.body.page, list.body.limit], [200, 2, 1, 20]);
  assert.deepEqual(list.body.data.map((a: { id: string }) => a.id), [id, second.body.id], 'in creation order');
  const tg = list.body.data[1];
  assert.deepEqual([tg.name, tg.enabled, tg.conditions_mode, tg.config], ['Team chat', false, 'any', { bot_token: '********', chat_id: '-100' }]);
  assert.deepEqual(tg.conditions, [{ field: 'topic', op: 'equals', value: 'sales' }, { field: 'phone', op: 'not_empty' }]);
  const page2 = await call('GET', `/form/${form}/action?limit=1&page=2`);
  assert.deepEqual([page2.body.data.length, page2.body.data[0].id, page2.body.total], [1, second.body.id, 2]);
  assert.equal(JSON.stringify(list.body).includes('s3cret') || JSON.stringify(list.body).includes('123:abc'), false, 'no secret in the list');
});

test('POST /form/{id}/action: 400 validation_error naming the field', async () => {
  const call = workspace();
  const form = (await call('POST', '/form', { name: 'Contact' })).body.id as string;
  const bad: [Record<string, unknown>, string | RegExp][] = [
    [{ type: 'pigeon', config: {} }, /^type: must be one of "email", "email_template"/],
    [{ type: 'slack' }, 'config is required'],
    [{ config: {} }, 'type is required'],
    [{ type: 'slack', config: {} }, 'config.webhook_url: required for type slack'],
    [{ type: 'slack', config: { webhook_url: 'https://hooks.slack.com/x', colour: 'red' } }, 'config.colour: unknown key for type slack (keys: webhook_url)'],
    [{ type: 'email', config: { to: 'not-an-address' } }, 'config.to: must hold e-mail addresses only'],
    [{ type: 'slack', config: { webhook_url: 'https://hooks.slack.com/x' }, conditions: [{ field: 'a', op: 'matches', value: 'x' }] }, /^conditions\.0\.op: must be one of "equals"/],
    [{ type: 'slack', config: { webhook_url: 'https://hooks.slack.com/x' }, conditions: [{ field: 'a', op: 'equals', value: 'x', extra: 1 }] }, 'unknown field "extra"'],
    [{ type: 'slack', config: { webhook_url: 'https://hooks.slack.com/x' }, conditions: [{ field: 'a', op: 'equals' }] }, 'conditions[0].value: required with op equals'],
    [{ type: 'slack', config: { webhook_url: 'https://hooks.slack.com/x' }, conditions: [{ field: 'n', op: 'gt', value: 'many' }] }, 'conditions[0].value: must be a number with op gt'],
    [{ type: 'slack', config: { webhook_url: 'https://hooks.slack.com/x' }, conditions_mode: 'some' }, /^conditions_mode: must be one of "all", "any", null$/],
  ];
  for (const [body, msg] of bad) {
    const r = await call('POST', `/form/${form}/action`, { form_id: form, ...body });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.name, 'validation_error');
    if (typeof msg === 'string') assert.equal(r.body.message, msg);
    else assert.match(r.body.message, msg);
  }
  assert.equal((await call('GET', `/form/${form}/action`)).body.total, 0);
  const noId = await call('POST', `/form/${form}/action`, { type: 'slack', config: { webhook_url: 'https://hooks.slack.com/x' } });
  assert.deepEqual([noId.status, noId.body.message], [400, 'form_id is required']);
});

test('GET /plan: the workspace\'s plan from forms.tenantTiers or forms.defaultTier, its limits, features and usage', async () => {
  const team = workspace();
  const f = (await team('POST', '/form', { name: 'A' })).body.id as string;
  await team('POST', '/form', { name: 'B' });
  await team('POST', `/form/${f}/action`, { form_id: f, type: 'slack', config: { webhook_url: 'https://hooks.slack.com/x' } });
  assert.deepEqual((await team('GET', '/plan')).body, {
    plan: 'team',
    limits: { forms: 20, actions_per_form: 5, submissions_per_month: 5000, file_bytes: 2000000, features: { recaptcha: true, custom_domains: true } },
    usage: { forms: 2, actions: 1, submissions_this_month: 0 },
  });
  assert.deepEqual((await workspace('small')('GET', '/plan')).body, {
    plan: 'starter',
    limits: { forms: 2, actions_per_form: 1, submissions_per_month: 50, file_bytes: 1000, features: { recaptcha: false, custom_domains: false } },
    usage: { forms: 0, actions: 0, submissions_this_month: 0 },
  });
});

test('plan limits: 403 past the actions per form; a copy within the limits is made; forms counted per workspace', async () => {
  const small = publicClient(d, addFormKey(d, { tenantId: 'small' }).key);
  const form = (await small('POST', '/form', { name: 'Only' })).body.id as string;
  const slack = { type: 'slack', config: { webhook_url: 'https://hooks.slack.com/x' } };
  assert.equal((await small('POST', `/form/${form}/action`, { form_id: form, ...slack })).status, 201);
  const over = await small('POST', `/form/${form}/action`, { form_id: form, ...slack });
  assert.deepEqual([over.status, over.body], [403, { name: 'forbidden', message: 'plan starter allows 1 actions per form' }]);
  assert.equal((await small('POST', `/form/${form}/duplicate`, { form_id: form })).status, 201, 'a copy with one action fits');
  const third = await small('POST', '/form', { name: 'Third' });
  assert.deepEqual([third.status, third.body.message], [403, 'plan starter allows 2 forms']);
  const captcha = await small('PATCH', `/form/${form}`, { form_id: form, recaptcha_min_score: 0.3 });
  assert.deepEqual([captcha.status, captcha.body.message], [403, 'plan starter does not include recaptcha (needed by recaptcha_min_score)']);
});
