import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AlertEvent } from '../../../runtime/alerts/events.js';
import { webhookPayload } from '../../../runtime/alerts/targets/webhook.js';
import { oncallAEvent, oncallAPath } from '../../../runtime/alerts/targets/oncall-a.js';
import { oncallBRequest, oncallBTarget } from '../../../runtime/alerts/targets/oncall-b.js';
import type { HttpClient, HttpRequest } from '../../../runtime/net/http-client.js';

const down: AlertEvent = { type: 'health_transition', poolId: 'p1', ipAddress: '10.0.0.7', healthy: false, timestamp: 1_700_000_123_456, node: 'n1', score: 0.2, rttMs: 0 };
const up: AlertEvent = { ...down, healthy: true, score: 1, rttMs: 3 };
const rejected: AlertEvent = { type: 'gitops_rejected', revision: '0123456789abcdef0123', reason: 'SignatureInvalid', message: 'commit is not signed', timestamp: 1_700_000_200_999, node: 'n1' };

test('webhook payloads: health is exactly the four spec fields, seconds; GitOps carries type', () => {
  const rows: { name: string; given: AlertEvent; want: unknown }[] = [
    { name: 'down', given: down, want: { poolId: 'p1', ipAddress: '10.0.0.7', healthy: false, timestamp: 1_700_000_123 } },
    { name: 'up', given: up, want: { poolId: 'p1', ipAddress: '10.0.0.7', healthy: true, timestamp: 1_700_000_123 } },
    { name: 'gitops', given: rejected, want: { type: 'gitops_rejected', revision: rejected.revision, reason: 'SignatureInvalid', message: 'commit is not signed', timestamp: 1_700_000_200 } },
  ];
  for (const r of rows) assert.deepEqual(webhookPayload(r.given), r.want, r.name);
});

test('oncall_a events: trigger/resolve, dedup key, severity, resolve always info', () => {
  const cfg = { routingKey: 'rk-1', severity: 'warning' as const };
  const rows: { name: string; given: AlertEvent; want: { action: string; key: string; severity: string } }[] = [
    { name: 'down triggers with configured severity', given: down, want: { action: 'trigger', key: 'svc/p1/10.0.0.7', severity: 'warning' } },
    { name: 'up resolves with info', given: up, want: { action: 'resolve', key: 'svc/p1/10.0.0.7', severity: 'info' } },
    { name: 'gitops triggers with its own key', given: rejected, want: { action: 'trigger', key: `svc/gitops/${(rejected as { revision: string }).revision}`, severity: 'warning' } },
  ];
  for (const r of rows) {
    const ev = oncallAEvent(cfg, r.given) as { routing_key: string; event_action: string; dedup_key: string; payload: { severity: string; summary: string; source: string; timestamp: string } };
    assert.equal(ev.routing_key, 'rk-1', r.name);
    assert.deepEqual({ action: ev.event_action, key: ev.dedup_key, severity: ev.payload.severity }, r.want, r.name);
    assert.equal(ev.payload.source, 'n1');
    assert.ok(ev.payload.summary.length > 0);
    assert.equal(ev.payload.timestamp, new Date(r.given.timestamp).toISOString());
  }
});

test('oncall_b requests: create with alias and priority, close by alias', () => {
  const cfg = { apiKey: 'k', priority: 'P2' as const, region: 'us' as const };
  const create = oncallBRequest(cfg, down);
  assert.equal(create.path, '/v2/alerts');
  assert.equal(create.body.alias, 'svc/p1/10.0.0.7');
  assert.equal(create.body.priority, 'P2');
  assert.ok(String(create.body.message).length <= 130);
  const close = oncallBRequest(cfg, up);
  assert.equal(close.path, '/v2/alerts/svc%2Fp1%2F10.0.0.7/close?identifierType=alias');
  const g = oncallBRequest(cfg, rejected);
  assert.equal(g.body.alias, `svc/gitops/${(rejected as { revision: string }).revision}`);
});

test('oncall_b base URL by region, overridable', async () => {
  const seen: HttpRequest[] = [];
  const client: HttpClient = { send: async (r) => { seen.push(r); return { status: 202, headers: {}, body: '' }; }, close: async () => {} };
  const rows: { cfg: Parameters<typeof oncallBTarget>[0]; want: string }[] = [
    { cfg: { apiKey: 'k', priority: 'P1', region: 'us' }, want: 'https://api.opsgenie.com/v2/alerts' },
    { cfg: { apiKey: 'k', priority: 'P1', region: 'eu' }, want: 'https://api.eu.opsgenie.com/v2/alerts' },
    { cfg: { apiKey: 'k', priority: 'P1', region: 'eu', baseUrl: 'http://relay.internal:8080/' }, want: 'http://relay.internal:8080/v2/alerts' },
  ];
  for (const r of rows) {
    await oncallBTarget(r.cfg, 0, client).deliver([down]);
    assert.equal(seen.at(-1)!.url, r.want);
    assert.equal(seen.at(-1)!.headers?.authorization, 'GenieKey k');
  }
});

test('applied and rolled-back revisions: webhook bodies, oncall_a change event and trigger, oncall_b P5 and incident', () => {
  const applied: AlertEvent = { type: 'gitops_applied', revision: 'feedface00112233', creates: 2, updates: 1, deletes: 0, timestamp: 1_700_000_300_500, node: 'n1' };
  const rollback: AlertEvent = {
    ...applied, type: 'gitops_rollback', rolledBackTo: 'c0ffee0011223344', reason: 'healthy members 0/2 (0%) below minHealthyShare 50%', result: 'RolledBack', message: 'revision feedface0011 was rolled back to c0ffee001122',
  };
  assert.deepEqual(webhookPayload(applied), { type: 'gitops_applied', revision: 'feedface00112233', creates: 2, updates: 1, deletes: 0, timestamp: 1_700_000_300 });
  assert.deepEqual(webhookPayload(rollback), {
    type: 'gitops_rollback', revision: 'feedface00112233', rolledBackTo: 'c0ffee0011223344', reason: 'healthy members 0/2 (0%) below minHealthyShare 50%',
    result: 'RolledBack', message: 'revision feedface0011 was rolled back to c0ffee001122', creates: 2, updates: 1, deletes: 0, timestamp: 1_700_000_300,
  });
  const cfg = { routingKey: 'rk', severity: 'critical' as const };
  assert.equal(oncallAPath(applied), '/v2/change/enqueue');
  assert.equal(oncallAPath(rollback), '/v2/enqueue');
  const change = oncallAEvent(cfg, applied) as { routing_key: string; event_action?: string; payload: { summary: string } };
  assert.equal(change.routing_key, 'rk');
  assert.equal(change.event_action, undefined, 'a change event opens no incident');
  assert.match(change.payload.summary, /feedface0011 applied \(creates=2 updates=1 deletes=0\)/);
  const trigger = oncallAEvent(cfg, rollback) as { event_action: string; dedup_key: string; payload: { summary: string; custom_details: Record<string, unknown> } };
  assert.equal(trigger.event_action, 'trigger');
  assert.equal(trigger.dedup_key, 'svc/gitops-rollback/feedface00112233');
  assert.equal(trigger.payload.summary, 'gslbd: GitOps revision feedface0011 rolled back to c0ffee001122: healthy members 0/2 (0%) below minHealthyShare 50%');
  assert.equal(trigger.payload.custom_details.rolledBackTo, 'c0ffee0011223344');
  const b = oncallBRequest({ apiKey: 'k', priority: 'P1', region: 'us' }, applied);
  assert.equal(b.body.priority, 'P5');
  assert.equal(b.body.alias, 'svc/gitops-applied/feedface00112233');
  const rb = oncallBRequest({ apiKey: 'k', priority: 'P2', region: 'us' }, rollback).body;
  assert.equal(rb.priority, 'P2', 'a rollback is an incident');
  assert.deepEqual(rb.details, { revision: 'feedface00112233', rolledBackTo: 'c0ffee0011223344', reason: 'healthy members 0/2 (0%) below minHealthyShare 50%', result: 'RolledBack', node: 'n1' });
});

test('every target carries the served commit and the seconds since it was applied', async () => {
  const sha = 'c0ffee'.padEnd(40, '0');
  const applied = { commit: sha, at: 1_700_000_000_000 };
  const rows: { name: string; given: AlertEvent; want: { appliedCommit: string | null; secondsSinceApply: number | null } }[] = [
    { name: 'down', given: { ...down, applied }, want: { appliedCommit: sha, secondsSinceApply: 123 } },
    { name: 'up', given: { ...up, applied }, want: { appliedCommit: sha, secondsSinceApply: 123 } },
    { name: 'gitops', given: { ...rejected, applied }, want: { appliedCommit: sha, secondsSinceApply: 200 } },
    { name: 'nothing applied yet', given: { ...down, applied: { commit: null, at: null } }, want: { appliedCommit: null, secondsSinceApply: null } },
    { name: 'applied after the event (clock skew) reads 0', given: { ...down, applied: { commit: sha, at: down.timestamp + 5000 } }, want: { appliedCommit: sha, secondsSinceApply: 0 } },
  ];
  const { mailVars } = await import('../../../runtime/alerts/targets/mail.js');
  for (const r of rows) {
    const hook = webhookPayload(r.given);
    assert.deepEqual({ appliedCommit: hook.appliedCommit, secondsSinceApply: hook.secondsSinceApply }, r.want, `webhook ${r.name}`);
    const a = oncallAEvent({ routingKey: 'rk', severity: 'critical' }, r.given) as { payload: { custom_details: Record<string, unknown> } };
    assert.deepEqual({ appliedCommit: a.payload.custom_details.appliedCommit, secondsSinceApply: a.payload.custom_details.secondsSinceApply }, r.want, `oncall_a ${r.name}`);
    const b = oncallBRequest({ apiKey: 'k', priority: 'P1', region: 'us' }, r.given);
    if (r.given.type === 'health_transition' && r.given.healthy) {
      assert.match(String(b.body.note), new RegExp(`serving ${r.want.appliedCommit ?? 'no commit'}, applied ${r.want.secondsSinceApply ?? '-'} s before`), `oncall_b close ${r.name}`);
    } else {
      const details = b.body.details as Record<string, string>;
      assert.deepEqual({ appliedCommit: details.appliedCommit, secondsSinceApply: details.secondsSinceApply },
        { appliedCommit: r.want.appliedCommit ?? '', secondsSinceApply: r.want.secondsSinceApply === null ? '' : String(r.want.secondsSinceApply) }, `oncall_b ${r.name}`);
    }
    const mail = mailVars([r.given], 'n1') as { events: Record<string, unknown>[] };
    assert.deepEqual({ appliedCommit: mail.events[0]!.appliedCommit, secondsSinceApply: mail.events[0]!.secondsSinceApply }, r.want, `mail ${r.name}`);
  }
});
