import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/proc.js';
import { Recorder } from '../helpers/recorder.js';
import { TestSmtp } from '../helpers/smtp.js';
import { addFormKey, publicClient } from './forms-fixture.js';
import { FormStore } from '../../runtime/forms/forms/store.js';
import { actionFields } from '../../runtime/forms/forms/actions.js';

// Form actions that really deliver (forms-api.md §2 "Action", §3 rules 3–5; docs/forms.md
// "Deliveries"): each type's exact payload to a local recorder (a real smtp-server for mail),
// conditions, Standard Webhooks signatures, the queue's retries, retry/test/replay/log, pausing.

let d: TestDaemon;
let smtp: TestSmtp;
const rec = new Recorder();
let base = '';
let workspaces = 0;

before(async () => {
  smtp = new TestSmtp();
  await smtp.start();
  base = await rec.start();
  d = await startTestDaemon({
    alerts: { smtp: [{ host: '127.0.0.1', port: smtp.port, from: 'forms@example.test', to: ['ops@example.test'], startTls: false }] },
    forms: {
      defaultTier: 'business',
      rateLimits: { perIpPerMinute: 100_000 },
      deliveries: { pollIntervalMs: 50, retryDelaysMs: [50, 50, 50], pauseAfterFailures: 6, allowPrivateTargets: ['127.0.0.0/8'] },
      services: { telegramURL: `${base}/telegram` },
    },
  } as never);
});
after(async () => {
  try {
    await d?.stop();
  } finally {
    await rec.stop();
    await smtp?.stop();
  }
});

type Call = ReturnType<typeof publicClient>;
/** A form of a fresh workspace with these actions; returns the client, the form id and the action ids. */
async function setup(actions: Record<string, unknown>[], settings: Record<string, unknown> = {}, tenantId = `dl${++workspaces}`) {
  const call = publicClient(d, addFormKey(d, { tenantId }).key);
  const id = (await call('POST', '/form', { name: 'Contact us', ...settings })).body.id as string;
  const ids: string[] = [];
  for (const a of actions) {
    const res = await call('POST', `/form/${id}/action`, { form_id: id, ...a });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    ids.push(res.body.id as string);
  }
  return { call, id, ids };
}

/** Posts a submission as JSON; returns its id. */
async function submit(call: Call, formId: string, fields: Record<string, unknown>): Promise<number> {
  const res = await fetch(`${d.url}/f/${formId}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(fields) });
  assert.equal(res.status, 200, await res.text());
  const list = (await call('GET', `/form/${formId}/submission?limit=1`)).body;
  return list.data[0].id as number;
}

/** The recorder's requests to one path. */
const to = (path: string) => rec.requests.filter((r) => r.url === path);

test('webhook: the Standard Webhooks envelope, signed (webhook-id, webhook-timestamp, webhook-signature), with extra headers', async () => {
  const secret = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
  const { call, id } = await setup([{ type: 'webhook', config: { url: `${base}/hook`, secret, headers: { 'X-Team': 'sales' } } }]);
  const sid = await submit(call, id, { email: 'a@example.com', message: 'Hello', tags: ['x', 'y'] });
  await waitFor(() => to('/hook').length === 1, 5000);
  const r = to('/hook')[0]!;
  assert.equal(r.headers['content-type'], 'application/json');
  assert.equal(r.headers['x-team'], 'sales');
  assert.match(String(r.headers['webhook-id']), /^dlv_\d+$/);
  const ts = String(r.headers['webhook-timestamp']);
  assert.ok(Math.abs(Number(ts) - Date.now() / 1000) < 30);
  const want = createHmac('sha256', Buffer.from('0123456789abcdef0123456789abcdef')).update(`${r.headers['webhook-id']}.${ts}.${r.raw}`).digest('base64');
  assert.equal(r.headers['webhook-signature'], `v1,${want}`);
  assert.deepEqual(r.json, {
    type: 'submission.created', timestamp: r.json.timestamp,
    data: {
      form: { id, name: 'Contact us' },
      submission: { id: sid, created_at: r.json.data.submission.created_at, data: { email: 'a@example.com', message: 'Hello', tags: ['x', 'y'] }, files: [], claimed_by: null },
    },
  });
});

/** Whether a recorded request carries a valid Standard Webhooks signature made with `secret` (`whsec_<base64>`). */
function signedWith(r: { headers: Record<string, unknown>; raw: string }, secret: string): boolean {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const want = createHmac('sha256', key).update(`${r.headers['webhook-id']}.${r.headers['webhook-timestamp']}.${r.raw}`).digest('base64');
  return r.headers['webhook-signature'] === `v1,${want}`;
}

test('webhook without a secret: one is generated (whsec_, 32 random bytes), answered once with no-store, never read again, and every delivery is signed with it', async () => {
  const { call, id } = await setup([]);
  const made = await call('POST', `/form/${id}/action`, { form_id: id, type: 'webhook', config: { url: `${base}/gen-secret` } });
  assert.equal(made.status, 201);
  const secret = made.body.signing_secret as string;
  assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.equal(Buffer.from(secret.slice(6), 'base64').length, 32);
  assert.equal(made.headers.get('cache-control'), 'no-store');
  assert.deepEqual([made.body.config.secret, made.body.warnings], ['********', []]);
  const action = made.body.id as string;
  const listed = (await call('GET', `/form/${id}/action`)).body.data[0];
  assert.deepEqual([listed.config.secret, 'signing_secret' in listed], ['********', false], 'never shown again');
  const renamed = await call('PATCH', `/action/${action}`, { action_id: action, name: 'renamed' });
  assert.equal('signing_secret' in renamed.body, false, 'a change that keeps the secret does not show it');

  await submit(call, id, { n: 1 });
  await waitFor(() => to('/gen-secret').length === 1, 5000);
  assert.ok(signedWith(to('/gen-secret')[0]!, secret), 'signed with the generated secret');

  const rotated = await call('PATCH', `/action/${action}`, { action_id: action, config: { secret: null } });
  assert.equal(rotated.status, 200);
  const next = rotated.body.signing_secret as string;
  assert.match(next, /^whsec_/);
  assert.notEqual(next, secret, 'removing the secret rotates it');
  await submit(call, id, { n: 2 });
  await waitFor(() => to('/gen-secret').length === 2, 5000);
  assert.ok(signedWith(to('/gen-secret')[1]!, next));

  const own = await call('POST', `/form/${id}/action`, { form_id: id, type: 'webhook', config: { url: `${base}/own-secret`, secret: 'mine' } });
  assert.equal('signing_secret' in own.body, false, 'a secret the caller chose is not echoed');
  const slack = await call('POST', `/form/${id}/action`, { form_id: id, type: 'slack', config: { webhook_url: `${base}/s` } });
  assert.deepEqual(['signing_secret' in slack.body, slack.body.warnings], [false, []], 'other types sign nothing');
});

test('a webhook stored without a secret (before secrets were generated) stays unsigned with a warning until it is changed', async () => {
  const { call, id } = await setup([]);
  const store = new FormStore(d.core);
  const legacy = store.addAction(store.byId(id)!, actionFields({ type: 'webhook', config: { url: `${base}/legacy` } }));
  const listed = (await call('GET', `/form/${id}/action`)).body.data[0];
  assert.equal(listed.warnings.length, 1);
  assert.match(listed.warnings[0], /^unsigned: this webhook has no secret/);
  await submit(call, id, { n: 1 });
  await waitFor(() => to('/legacy').length === 1, 5000);
  assert.equal(to('/legacy')[0]!.headers['webhook-signature'], undefined, 'unsigned, as before');
  const changed = await call('PATCH', `/action/${legacy.id}`, { action_id: legacy.id, name: 'now signed' });
  assert.match(changed.body.signing_secret, /^whsec_/);
  assert.deepEqual(changed.body.warnings, []);
  await submit(call, id, { n: 2 });
  await waitFor(() => to('/legacy').length === 2, 5000);
  assert.ok(signedWith(to('/legacy')[1]!, changed.body.signing_secret));
});

test('chat services and n8n: each in its own incoming-message format; telegram through forms.services.telegramURL', async () => {
  const { call, id } = await setup([
    { type: 'slack', config: { webhook_url: `${base}/slack` } },
    { type: 'discord', config: { webhook_url: `${base}/discord`, username: 'Forms' } },
    { type: 'teams', config: { webhook_url: `${base}/teams` } },
    { type: 'telegram', config: { bot_token: '123:ABC', chat_id: '-100' } },
    { type: 'ntfy', config: { url: `${base}/ntfy-topic`, token: 'tk_1', priority: 4 } },
    { type: 'n8n', config: { webhook_url: `${base}/n8n`, secret: 'n8n-secret' } },
  ]);
  await submit(call, id, { name: 'Ada <3', message: 'Hi' });
  await waitFor(() => ['/slack', '/discord', '/teams', '/telegram/bot123:ABC/sendMessage', '/ntfy-topic', '/n8n'].every((p) => to(p).length === 1), 5000);
  assert.deepEqual(to('/slack')[0]!.json, {
    text: 'New submission to Contact us',
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: 'New submission to Contact us' } },
      { type: 'section', text: { type: 'mrkdwn', text: '*name*\nAda <3' } },
      { type: 'section', text: { type: 'mrkdwn', text: '*message*\nHi' } },
    ],
  });
  const discord = to('/discord')[0]!.json;
  assert.deepEqual({ ...discord, embeds: [{ ...discord.embeds[0], timestamp: 't' }] }, {
    username: 'Forms', content: 'New submission to Contact us', allowed_mentions: { parse: [] },
    embeds: [{ title: 'Contact us', fields: [{ name: 'name', value: 'Ada <3', inline: false }, { name: 'message', value: 'Hi', inline: false }], timestamp: 't' }],
  });
  const card = to('/teams')[0]!.json.attachments[0];
  assert.equal(card.contentType, 'application/vnd.microsoft.card.adaptive');
  assert.deepEqual(card.content.body[1], { type: 'FactSet', facts: [{ title: 'name', value: 'Ada <3' }, { title: 'message', value: 'Hi' }] });
  assert.deepEqual(to('/telegram/bot123:ABC/sendMessage')[0]!.json, {
    chat_id: '-100', text: '<b>New submission to Contact us</b>\n<b>name</b>: Ada &lt;3\n<b>message</b>: Hi', parse_mode: 'HTML', disable_web_page_preview: true,
  });
  const ntfy = to('/ntfy-topic')[0]!;
  assert.equal(ntfy.raw, 'name: Ada <3\nmessage: Hi');
  assert.deepEqual([ntfy.headers.title, ntfy.headers.priority, ntfy.headers.authorization], ['New submission to Contact us', '4', 'Bearer tk_1']);
  const n8n = to('/n8n')[0]!;
  assert.equal(n8n.headers['x-webhook-secret'], 'n8n-secret');
  assert.equal(n8n.json.type, 'submission.created');
});

test('e-mail types through the workspace\'s mail: the field list with Reply-To, a Liquid template (escaped), an autoreply to the visitor', async () => {
  const before = smtp.messages.length;
  // the operator's workspace sends through the server-wide settings (alerts.smtp); another workspace needs its own
  const { call, id } = await setup([
    { type: 'email', config: { to: ['team@example.test'], reply_to_field: 'email' } },
    { type: 'email_template', config: { to: 'sales@example.test', subject: 'Lead from {{ submission.name }}', body: '<p>{{ submission.message }}</p><p>{{ form.name }}</p>' } },
    { type: 'autoreply', config: { email_field: 'email', subject: 'Thanks, {{ submission.name }}', body: '<p>We got it.</p>', from_name: 'Example Inc.' } },
  ], {}, 'default');
  await submit(call, id, { name: 'Ada', email: 'ada@example.com', message: '<b>hi</b>' });
  const mails = (await smtp.waitFor(before + 3, 8000)).slice(before);
  const by = (rcpt: string) => mails.find((m) => m.rcptTo.includes(rcpt))!;
  const team = by('team@example.test');
  assert.equal(team.subject, 'New submission: Contact us');
  assert.equal(team.headers['reply-to'], 'ada@example.com');
  assert.match(team.text, /name: Ada\nemail: ada@example\.com\nmessage: <b>hi<\/b>/);
  const sales = by('sales@example.test');
  assert.equal(sales.subject, 'Lead from Ada');
  assert.match(sales.html!, /<p>&lt;b&gt;hi&lt;\/b&gt;<\/p><p>Contact us<\/p>/);
  const reply = by('ada@example.com');
  assert.equal(reply.subject, 'Thanks, Ada');
  assert.match(reply.headers.from!, /^"?Example Inc\."? <forms@example\.test>$/);

  const own = await setup([{ type: 'email', config: { to: 'x@example.test' } }]);
  await submit(own.call, own.id, { a: '1' });
  const action = (await own.call('GET', `/form/${own.id}/action`)).body.data[0].id as string;
  await waitFor(async () => (await own.call('GET', `/action/${action}/deliveries`)).body.data[0]?.last_error, 5000);
  assert.equal((await own.call('GET', `/action/${action}/deliveries`)).body.data[0].last_error, 'mail is not configured for this tenant: PUT /api/v1/settings/smtp');
});

test('conditions route: only the actions whose conditions the submission meets are delivered', async () => {
  const { call, id } = await setup([
    { type: 'webhook', name: 'sales', config: { url: `${base}/cond-sales` }, conditions: [{ field: 'topic', op: 'equals', value: 'sales' }] },
    { type: 'webhook', name: 'big', config: { url: `${base}/cond-big` }, conditions: [{ field: 'budget', op: 'gt', value: '1000' }, { field: 'vip', op: 'not_empty' }], conditions_mode: 'any' },
  ]);
  await submit(call, id, { topic: 'sales', budget: '10' });
  await submit(call, id, { topic: 'support', budget: '5000' });
  await submit(call, id, { topic: 'support', budget: '1', vip: 'yes' });
  await submit(call, id, { topic: 'other' });
  await waitFor(() => to('/cond-sales').length === 1 && to('/cond-big').length === 2, 5000);
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(to('/cond-sales').map((r) => r.json.data.submission.data.topic), ['sales']);
  assert.deepEqual(to('/cond-big').map((r) => r.json.data.submission.data.budget).sort(), ['1', '5000']);
});

test('a receiver that fails and then recovers gets exactly one delivery per submission; the log shows the attempts', async () => {
  let calls = 0;
  rec.answer = (_n, req) => (req.url === '/flaky' && ++calls <= 4 ? 503 : 202);
  try {
    const { call, id, ids } = await setup([{ type: 'webhook', config: { url: `${base}/flaky` } }]);
    await submit(call, id, { n: 1 });
    await submit(call, id, { n: 2 });
    await waitFor(() => to('/flaky').filter((r) => r.status === 202).length === 2, 8000);
    await new Promise((r) => setTimeout(r, 300));
    const ok = to('/flaky').filter((r) => r.status === 202).map((r) => r.json.data.submission.data.n);
    assert.deepEqual(ok.sort(), ['1', '2'], 'one success per submission');
    const ids2 = new Set(to('/flaky').map((r) => r.headers['webhook-id']));
    assert.equal(ids2.size, 2, 'webhook-id is stable across attempts');
    const log = await call('GET', `/action/${ids[0]}/deliveries`);
    assert.equal(log.status, 200);
    assert.deepEqual(log.body.data.map((x: { state: string; last_status: number }) => [x.state, x.last_status]), [['sent', 202], ['sent', 202]]);
    assert.equal(log.body.data.reduce((n: number, x: { attempts: number }) => n + x.attempts, 0), 6);
  } finally {
    rec.answer = () => 202;
  }
});

test('every attempt is in the log: its time, outcome, status, error and duration, numbered on across a retry', async () => {
  let calls = 0;
  rec.answer = (_n, req) => (req.url === '/history' && ++calls <= 2 ? 503 : req.url === '/history-down' ? 500 : 202);
  try {
    const { call, id, ids } = await setup([{ type: 'webhook', config: { url: `${base}/history` } }, { type: 'webhook', config: { url: `${base}/history-down` } }]);
    const started = Date.now();
    const sid = await submit(call, id, { n: 1 });
    await waitFor(async () => (await call('GET', `/action/${ids[0]}/deliveries?state=sent`)).body.total === 1, 8000);
    const dl = (await call('GET', `/action/${ids[0]}/deliveries`)).body.data[0];
    const host = `127.0.0.1:${new URL(base).port}`;
    assert.deepEqual([dl.submission_id, dl.state, dl.attempts, dl.last_status, dl.last_error], [sid, 'sent', 3, 202, null], 'the existing fields stay');
    assert.deepEqual(dl.attempt_history.map((a: any) => [a.number, a.outcome, a.status, a.error]), [
      [1, 'failed', 503, `${host} answered 503`],
      [2, 'failed', 503, `${host} answered 503`],
      [3, 'sent', 202, null],
    ]);
    for (const a of dl.attempt_history) {
      assert.ok(Number.isInteger(a.duration_ms) && a.duration_ms >= 0, 'a duration in ms');
      assert.ok(Date.parse(a.at) >= started - 1000, 'the time it started');
    }
    assert.ok(Date.parse(dl.attempt_history[0].at) <= Date.parse(dl.attempt_history[2].at), 'oldest first');

    const down = ids[1]!;
    await waitFor(async () => (await call('GET', `/action/${down}/deliveries?state=failed`)).body.total === 1, 8000);
    rec.answer = () => 202;
    assert.equal((await call('POST', `/action/${down}/retry`, { action_id: down })).body.queued, 1);
    await waitFor(async () => (await call('GET', `/action/${down}/deliveries?state=sent`)).body.total === 1, 8000);
    const again = (await call('GET', `/action/${down}/deliveries`)).body.data[0];
    assert.equal(again.attempts, 1, 'the count starts over with the retry');
    assert.deepEqual(again.attempt_history.map((a: any) => [a.number, a.outcome, a.status]), [[1, 'failed', 500], [2, 'failed', 500], [3, 'failed', 500], [4, 'failed', 500], [5, 'sent', 202]]);
  } finally {
    rec.answer = () => 202;
  }
});

test('a template that fails to render or passes a limit fails its delivery at once (no retries), the reason in the record', async () => {
  const { call, id, ids } = await setup([
    { type: 'email_template', config: { to: 'a@example.test', subject: 'x', body: '{% for i in (1..100000) %}{% for j in (1..100000) %}{{ i }}{% endfor %}{% endfor %}' } },
    { type: 'autoreply', config: { email_field: 'email', subject: 'Hi {{ submission.name | nosuchfilter }}', body: 'x' } },
  ]);
  await submit(call, id, { email: 'ada@example.com', name: 'Ada' });
  const settled = async (a: string) => (await call('GET', `/action/${a}/deliveries?state=failed`)).body.data[0];
  const [limit, broken] = [await waitFor(() => settled(ids[0]!), 15000), await waitFor(() => settled(ids[1]!), 15000)];
  assert.equal(limit.attempts, 1, 'a render limit is not retried');
  assert.match(limit.last_error, /^body: template error.*limit/);
  assert.deepEqual(limit.attempt_history.map((a: any) => [a.number, a.outcome, a.error]), [[1, 'failed', limit.last_error]]);
  assert.equal(broken.attempts, 1, 'a render error is not retried');
  assert.match(broken.last_error, /^subject: template error at line 1, column \d+: undefined filter: nosuchfilter/);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await call('GET', `/action/${ids[0]}/deliveries`)).body.data[0].attempts, 1, 'and not attempted again later');
});

test('retry, test, replay: failed deliveries re-queued; a test run delivers once and stores nothing; a replay of 100 delivers 100', async () => {
  rec.answer = (_n, req) => (req.url === '/down' ? 500 : 202);
  const { call, id, ids } = await setup([{ type: 'webhook', config: { url: `${base}/down` } }]);
  const action = ids[0]!;
  try {
    await submit(call, id, { n: 1 });
    await waitFor(async () => (await call('GET', `/action/${action}/deliveries?state=failed`)).body.total === 1, 8000);
    const failed = (await call('GET', `/action/${action}/deliveries`)).body.data[0];
    assert.deepEqual([failed.state, failed.attempts, failed.last_status, failed.last_error], ['failed', 4, 500, '127.0.0.1:' + new URL(base).port + ' answered 500']);
  } finally {
    rec.answer = () => 202;
  }
  const retried = await call('POST', `/action/${action}/retry`, { action_id: action });
  assert.deepEqual(retried.body, { action_id: action, queued: 1 });
  await waitFor(async () => (await call('GET', `/action/${action}/deliveries?state=sent`)).body.total === 1, 5000);

  const n = to('/down').length;
  const tested = await call('POST', `/action/${action}/test`, { action_id: action, data: { email: 'sample@example.com', age: 30 } });
  assert.equal(tested.status, 200);
  assert.deepEqual({ ...tested.body, duration_ms: 0 }, { action_id: action, ok: true, status: 202, detail: 'HTTP 202', duration_ms: 0 });
  assert.equal(to('/down').length, n + 1);
  const t = to('/down').at(-1)!;
  assert.deepEqual([t.json.type, t.json.data.submission.id, t.json.data.submission.data], ['action.test', null, { email: 'sample@example.com', age: '30' }]);
  assert.match(String(t.headers['webhook-id']), /^test_/);
  assert.equal((await call('GET', `/action/${action}/deliveries`)).body.total, 1, 'a test stores nothing');
  assert.equal((await call('GET', `/form/${id}/submission`)).body.total, 1);

  const sids: number[] = [];
  for (let i = 0; i < 100; i++) sids.push(await submit(call, id, { n: i }));
  await waitFor(async () => (await call('GET', `/action/${action}/deliveries?state=sent`)).body.total === 101, 15000);
  const replayTarget = to('/down').length;
  const replay = await call('POST', `/form/${id}/replay`, { form_id: id, submission_ids: sids });
  assert.deepEqual(replay.body, { form_id: id, submissions: 100, queued: 100 });
  await waitFor(() => to('/down').length === replayTarget + 100, 15000);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(to('/down').length, replayTarget + 100, 'exactly 100 more');
});

test('an action that keeps failing is paused (enabled: false) and its workspace is told; enabling it clears the run', async () => {
  rec.answer = (_n, req) => (req.url === '/dead' ? 500 : 202);
  const before = smtp.messages.length;
  try {
    const { call, id, ids } = await setup([{ type: 'webhook', name: 'dead end', config: { url: `${base}/dead` } }], {}, 'default');
    await submit(call, id, { n: 1 });
    await submit(call, id, { n: 2 });
    await waitFor(async () => (await call('GET', `/form/${id}/action`)).body.data[0].enabled === false, 8000);
    const paused = (await call('GET', `/form/${id}/action`)).body.data[0];
    assert.ok(Date.parse(paused.paused_at) > 0, 'paused_at tells a pause from a switch-off by hand');
    assert.equal(paused.pause_reason, `failed 6 times in a row; last error: 127.0.0.1:${new URL(base).port} answered 500`);
    const mail = (await smtp.waitFor(before + 1, 5000)).slice(before).find((m) => m.subject === 'Form action paused: dead end')!;
    assert.ok(mail, 'the workspace is told by mail');
    assert.match(mail.text, /failed 6 times in a row and was paused/);
    const patched = await call('PATCH', `/action/${ids[0]}`, { action_id: ids[0], enabled: true, config: { url: `${base}/alive` } });
    assert.equal(patched.status, 200);
    assert.deepEqual([patched.body.enabled, patched.body.config.url, patched.body.paused_at, patched.body.pause_reason], [true, `${base}/alive`, null, null], 'enabling clears the pause');
    const byHand = await call('PATCH', `/action/${ids[0]}`, { action_id: ids[0], enabled: false });
    assert.deepEqual([byHand.body.enabled, byHand.body.paused_at, byHand.body.pause_reason], [false, null, null], 'switched off by hand: no pause');
    assert.equal((await call('PATCH', `/action/${ids[0]}`, { action_id: ids[0], enabled: true })).status, 200);
    assert.equal((await call('POST', `/action/${ids[0]}/retry`, { action_id: ids[0] })).body.queued, 2);
    await waitFor(() => to('/alive').length === 2, 5000);
  } finally {
    rec.answer = () => 202;
  }
});

test('PATCH merges config keys (null removes one) and re-checks the whole; DELETE removes the action; other workspaces get 404', async () => {
  const { call, ids } = await setup([{ type: 'webhook', config: { url: `${base}/x`, secret: 's1', headers: { 'X-A': '1' } } }]);
  const a = ids[0]!;
  const merged = await call('PATCH', `/action/${a}`, { action_id: 'ignored', config: { headers: null, url: `${base}/y` }, name: 'renamed' });
  assert.equal(merged.status, 200);
  assert.deepEqual([merged.body.config, merged.body.name], [{ url: `${base}/y`, secret: '********' }, 'renamed']);
  const bad = await call('PATCH', `/action/${a}`, { action_id: a, config: { url: 'ftp://x', nope: 1 } });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.message, 'config.url: must be an http or https URL; config.nope: unknown key for type webhook (keys: url, secret, headers, events)');
  const other = publicClient(d, addFormKey(d, { tenantId: 'dl-other' }).key);
  assert.equal((await other('PATCH', `/action/${a}`, { action_id: a, name: 'x' })).status, 404);
  assert.equal((await other('GET', `/action/${a}/deliveries`)).status, 404);
  assert.equal((await other('POST', `/action/${a}/test`, { action_id: a, data: {} })).status, 404);
  const del = await call('DELETE', `/action/${a}`, { action_id: a });
  assert.deepEqual([del.status, del.body], [200, { deleted: true, action_id: a }]);
  assert.equal((await call('GET', `/action/${a}/deliveries`)).status, 404);
});

test('/email-template/preview: Liquid against mock_data and form.name, escaped by default, a template error names its line', async () => {
  const { call, id } = await setup([]);
  const res = await call('POST', '/email-template/preview', { body: '<h1>{{ form.name }}</h1>\n<p>{{ submission.message }} {{ submission.message | raw }}</p>', subject: 'Hi {{ submission.name }}\n', mock_data: { name: 'Ada', message: '<i>x</i>' }, form_id: id });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { html: '<h1>Contact us</h1>\n<p>&lt;i&gt;x&lt;/i&gt; <i>x</i></p>', text: 'Contact us\n\n<i>x</i> x', subject: 'Hi Ada' });
  const err = await call('POST', '/email-template/preview', { body: 'line one\n{% if %}' });
  assert.equal(err.status, 400);
  assert.match(err.body.message, /^body: template error at line 2, column 6: invalid value expression/);
  const noFs = await call('POST', '/email-template/preview', { body: "{% include '/etc/passwd' %}" });
  assert.equal(noFs.status, 400, 'no file system');
  assert.equal((await call('POST', '/email-template/preview', { body: 'x', form_id: 'nope' })).status, 404);
});

test('a restart mid-retry loses nothing: the queue is on disk, and after the restart each submission is delivered exactly once', async () => {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-deliveries-restart-'));
  const config = (delays: number[]) => ({
    database: { path: join(dir, 'gslbd.db') },
    forms: { defaultTier: 'business', deliveries: { pollIntervalMs: 50, retryDelaysMs: delays, allowPrivateTargets: ['127.0.0.0/8'] } },
  }) as never;
  let down = true;
  rec.answer = (_n, req) => (req.url === '/restart' && down ? 503 : 202);
  try {
    const first = await startTestDaemon(config([100, 1500, 1500]));
    const call = publicClient(first, addFormKey(first).key);
    const id = (await call('POST', '/form', { name: 'Restart' })).body.id as string;
    const action = (await call('POST', `/form/${id}/action`, { form_id: id, type: 'webhook', config: { url: `${base}/restart` } })).body.id as string;
    for (let i = 0; i < 3; i++) {
      await fetch(`${first.url}/f/${id}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ n: i }) }).then((r) => r.arrayBuffer());
    }
    await waitFor(async () => (await call('GET', `/action/${action}/deliveries?state=retrying`)).body.total === 3 && to('/restart').length >= 6, 8000);
    await first.stop();
    const failedBefore = to('/restart').length;
    down = false;
    const second = await startTestDaemon(config([100, 100, 100]));
    try {
      const call2 = publicClient(second, addFormKey(second).key);
      // the queue kept each row's next attempt time across the restart; the new process sends them when due
      await waitFor(async () => (await call2('GET', `/action/${action}/deliveries?state=sent`)).body.total === 3, 8000);
      await new Promise((r) => setTimeout(r, 300));
      const delivered = to('/restart').slice(failedBefore).filter((r) => r.status === 202).map((r) => r.json.data.submission.data.n).sort();
      assert.deepEqual(delivered, ['0', '1', '2'], 'each submission exactly once after the restart');
    } finally {
      await second.stop();
    }
  } finally {
    rec.answer = () => 202;
    rmSync(dir, { recursive: true, force: true });
  }
});

test('events: webhooks subscribe with config.events; submission.claimed reaches the subscribers; both events go to the live feed', async () => {
  const feed: { type: string; payload: any }[] = [];
  const off = d.core.bus.on('ws_message', (m) => { if (m.type.startsWith('submission.')) feed.push(m as never); });
  try {
    const { call, id } = await setup([
      { type: 'webhook', config: { url: `${base}/ev-default` } },
      { type: 'webhook', config: { url: `${base}/ev-claimed`, events: ['submission.claimed'] } },
      { type: 'n8n', config: { webhook_url: `${base}/ev-both`, events: ['submission.created', 'submission.claimed'] } },
    ]);
    const bad = await call('POST', `/form/${id}/action`, { form_id: id, type: 'webhook', config: { url: `${base}/x`, events: ['submission.deleted'] } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.message, 'config.events: must hold submission.created, submission.claimed, submission.reminder only, each once');
    const sid = await submit(call, id, { a: '1' });
    await waitFor(() => to('/ev-default').length === 1 && to('/ev-both').length === 1, 5000);
    assert.equal((await call('POST', `/form/${id}/submission/${sid}/claim`, { form_id: id, submission_id: sid, by: 'ops@example.test' })).status, 200);
    await waitFor(() => to('/ev-claimed').length === 1 && to('/ev-both').length === 2, 5000);
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(to('/ev-default').map((r) => r.json.type), ['submission.created']);
    const claimed = to('/ev-claimed')[0]!.json;
    assert.deepEqual([claimed.type, claimed.data.submission.id, claimed.data.submission.claimed_by], ['submission.claimed', sid, 'ops@example.test']);
    assert.deepEqual(to('/ev-both').map((r) => r.json.type), ['submission.created', 'submission.claimed']);
    assert.deepEqual(feed.filter((m) => m.payload.form_id === id).map((m) => [m.type, m.payload.submission_id]), [['submission.created', sid], ['submission.claimed', sid]]);
  } finally {
    off();
  }
});

test('reminders: an unclaimed submission sends one reminder after the form\'s delay (email actions, subscribed webhooks); a claimed one none', async () => {
  const before = smtp.messages.length;
  const { call, id } = await setup([
    { type: 'webhook', config: { url: `${base}/remind`, events: ['submission.reminder'] } },
    { type: 'email', config: { to: 'team@example.test' } },
  ], { reminder_after_minutes: 30 }, 'default');
  assert.equal((await call('GET', `/form/${id}`)).body.reminder_after_minutes, 30);
  const open1 = await submit(call, id, { n: 'open' });
  const done = await submit(call, id, { n: 'claimed' });
  await smtp.waitFor(before + 2, 5000); // the two new-submission mails
  assert.equal((await call('POST', `/form/${id}/submission/${done}/claim`, { form_id: id, submission_id: done })).status, 200);
  const scheduled = d.core.ports.forms!.scheduled;
  /** moves the form's submissions `minutes` into the past, as if they had waited that long */
  const age = (minutes: number) => d.core.db.prepare('UPDATE form_submissions SET created_at = created_at - ? WHERE form_id = ?').run(minutes * 60_000, id);
  age(29);
  await scheduled(Date.now());
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(to('/remind').length, 0, 'not before the delay');
  age(2);
  await scheduled(Date.now());
  await waitFor(() => to('/remind').length === 1, 5000);
  const r = to('/remind')[0]!.json;
  assert.deepEqual([r.type, r.data.submission.id], ['submission.reminder', open1]);
  const mails = await smtp.waitFor(before + 3, 5000);
  assert.equal(mails.at(-1)!.subject, `Reminder: submission #${open1} to Contact us is not claimed yet`);
  age(120);
  await scheduled(Date.now());
  await new Promise((r2) => setTimeout(r2, 300));
  assert.equal(to('/remind').length, 1, 'one reminder per submission');
  const bad = await call('PATCH', `/form/${id}`, { form_id: id, reminder_after_minutes: 50_000 });
  assert.equal(bad.status, 400);
});
