import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ACTION_TYPE_TABLE, ACTION_TYPES, configProblems, MASK, maskConfig } from '../../../runtime/forms/actions/index.js';
import { actionFields, actionProblems } from '../../../runtime/forms/forms/actions.js';
import { conditionProblems, type Condition } from '../../../runtime/forms/forms/conditions.js';
import { problemsMessage } from '../../../runtime/forms/forms/settings.js';

test('the action-type table lists the 12 types of the spec in order, each example valid against its own keys', () => {
  assert.deepEqual(ACTION_TYPE_TABLE.map((t) => t.type), [...ACTION_TYPES]);
  assert.equal(ACTION_TYPES.length, 12);
  for (const t of ACTION_TYPE_TABLE) {
    assert.ok(t.config.some((k) => k.required), `${t.type} has a required key`);
    assert.deepEqual(configProblems(t.type, t.example), [], `example of ${t.type}`);
  }
});

const CONFIGS: { name: string; type: (typeof ACTION_TYPES)[number]; config: Record<string, unknown>; want: string }[] = [
  { name: 'required key missing', type: 'slack', config: {}, want: 'config.webhook_url: required for type slack' },
  { name: 'required key empty', type: 'telegram', config: { bot_token: '1:x', chat_id: '' }, want: 'config.chat_id: required for type telegram' },
  { name: 'unknown key', type: 'slack', config: { webhook_url: 'https://hooks.slack.com/x', chanel: '#a' }, want: 'config.chanel: unknown key for type slack (keys: webhook_url)' },
  { name: 'URL of another scheme', type: 'webhook', config: { url: 'ftp://example.com' }, want: 'config.url: must be an http or https URL' },
  { name: 'bad address', type: 'email', config: { to: ['ops@example.com', 'nobody'] }, want: 'config.to: must hold e-mail addresses only' },
  { name: 'empty address list', type: 'email', config: { to: [] }, want: 'config.to: must be an e-mail address or a list of 1 to 50' },
  { name: 'digest interval', type: 'email_digest', config: { to: 'ops@example.com', interval: 'monthly' }, want: 'config.interval: must be one of hourly, daily, weekly' },
  { name: 'ntfy priority', type: 'ntfy', config: { url: 'https://ntfy.sh/x', priority: 9 }, want: 'config.priority: must be an integer from 1 to 5' },
  { name: 'webhook headers', type: 'webhook', config: { url: 'https://example.com', headers: { 'X-A': 1 } }, want: 'config.headers: must map header names to string values' },
  { name: 'string key given a number', type: 'telegram', config: { bot_token: 1, chat_id: '2' }, want: 'config.bot_token: must be a string' },
];

for (const c of CONFIGS) test(`action config refused: ${c.name}`, () => assert.equal(problemsMessage(configProblems(c.type, c.config)), c.want));

test('a single address is accepted for a recipients key', () => {
  assert.deepEqual(configProblems('email', { to: 'ops@example.com' }), []);
});

const CONDITIONS: { name: string; given: Condition[]; want: string }[] = [
  { name: 'value missing', given: [{ field: 'email', op: 'equals' }], want: 'conditions[0].value: required with op equals' },
  { name: 'value with empty', given: [{ field: 'email', op: 'empty', value: 'x' }], want: 'conditions[0].value: op empty takes no value' },
  { name: 'gt not a number', given: [{ field: 'age', op: 'gt', value: 'ten' }], want: 'conditions[0].value: must be a number with op gt' },
  { name: 'lt empty', given: [{ field: 'age', op: 'lt', value: ' ' }], want: 'conditions[0].value: must be a number with op lt' },
  { name: 'empty field', given: [{ field: ' ', op: 'not_empty' }], want: 'conditions[0].field: must not be empty' },
];

for (const c of CONDITIONS) test(`condition refused: ${c.name}`, () => assert.equal(problemsMessage(conditionProblems(c.given)), c.want));

test('valid conditions of every operator pass', () => {
  assert.deepEqual(conditionProblems([
    { field: 'a', op: 'equals', value: 'x' }, { field: 'a', op: 'not_equals', value: '' }, { field: 'a', op: 'contains', value: 'x' },
    { field: 'a', op: 'not_contains', value: 'x' }, { field: 'a', op: 'starts_with', value: 'x' }, { field: 'a', op: 'empty' },
    { field: 'a', op: 'not_empty' }, { field: 'n', op: 'gt', value: '10' }, { field: 'n', op: 'lt', value: '-2.5' },
  ]), []);
});

test('a new action: defaults for nulls, empty config values dropped, problems of config and conditions together', () => {
  const a = actionFields({ type: 'webhook', config: { url: 'https://example.com/hook', secret: null, headers: '' }, name: null, enabled: null, conditions: null, conditions_mode: null });
  assert.deepEqual(a, { type: 'webhook', name: null, enabled: true, config: { url: 'https://example.com/hook' }, conditions: [], conditions_mode: 'all' });
  const b = actionFields({ type: 'slack', config: {}, name: ' Alerts ', enabled: false, conditions: [{ field: ' plan ', op: 'equals' }], conditions_mode: 'any' });
  assert.deepEqual([b.name, b.enabled, b.conditions_mode, b.conditions], ['Alerts', false, 'any', [{ field: 'plan', op: 'equals' }]]);
  assert.equal(problemsMessage(actionProblems(b)), 'config.webhook_url: required for type slack; conditions[0].value: required with op equals');
});

test('secrets are masked when listed: keys the type declares secret and keys named like secrets', () => {
  assert.deepEqual(maskConfig('webhook', { url: 'https://example.com/hook', secret: 's3cret', headers: { Authorization: 'Bearer x' } }), { url: 'https://example.com/hook', secret: MASK, headers: MASK });
  assert.deepEqual(maskConfig('slack', { webhook_url: 'https://hooks.slack.com/services/T/B/X' }), { webhook_url: MASK });
  assert.deepEqual(maskConfig('telegram', { bot_token: '1:abc', chat_id: '42' }), { bot_token: MASK, chat_id: '42' });
  assert.deepEqual(maskConfig('sheets', { spreadsheet_id: 'abc', credentials: '{}' }), { spreadsheet_id: 'abc', credentials: MASK });
  assert.deepEqual(maskConfig('email', { to: ['a@example.com'], api_key: 'k', password: 'p' }), { to: ['a@example.com'], api_key: MASK, password: MASK });
  for (const t of ACTION_TYPE_TABLE) {
    const masked = maskConfig(t.type, t.example);
    for (const k of t.config.filter((c) => c.secret)) if (k.key in t.example) assert.equal(masked[k.key], MASK, `${t.type}.${k.key}`);
  }
});
