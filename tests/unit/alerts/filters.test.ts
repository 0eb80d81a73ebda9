import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventTenant, targetAccepts } from '../../../runtime/alerts/filters.js';
import type { AlertEvent } from '../../../runtime/alerts/events.js';
import { alertTargetFields, alertTargetProblems, type AlertTargetInput, type AlertTargetRow } from '../../../runtime/alerts/target-row.js';
import type { Row } from '../../../core/model/types.js';
import { emptySnapshot, nextSnapshot } from '../../../core/snapshot/snapshot.js';

const meta = (id: string, tenantId: string) => ({ id, origin: 'api' as const, revision: 'r', tenantId });
const rows: Row[] = [
  { kind: 'pool', ...meta('p-eu', 'default'), name: 'eu' },
  { kind: 'pool', ...meta('p-us', 'default'), name: 'us' },
  { kind: 'pool', ...meta('p-acme', 'acme'), name: 'eu' },
  { kind: 'service', ...meta('s-www', 'default'), name: 'www', domain: 'www.example.test.', algorithm: 'round-robin', ttl: 30, poolId: 'p-eu', chain: [], whenAllUnhealthy: 'all', asnRules: [] },
  { kind: 'service', ...meta('s-acme', 'acme'), name: 'www', domain: 'www.acme.test.', algorithm: 'round-robin', ttl: 30, poolId: 'p-acme', chain: [], whenAllUnhealthy: 'all', asnRules: [] },
];
const snap = nextSnapshot(emptySnapshot(), rows.map((row) => ({ op: 'put' as const, row })), 'r', 0);

const flip = (poolId: string): AlertEvent => ({ type: 'health_transition', poolId, ipAddress: '10.0.0.1', healthy: false, timestamp: 0, node: 'n', score: 0, rttMs: 0 });
const rejected: AlertEvent = { type: 'gitops_rejected', revision: 'abc', reason: 'SignatureInvalid', message: 'm', timestamp: 0, node: 'n' };
const applied: AlertEvent = { type: 'gitops_applied', revision: 'abc', creates: 1, updates: 0, deletes: 0, timestamp: 0, node: 'n' };

function target(tenantId: string, b: Partial<AlertTargetInput> = {}): AlertTargetRow {
  return { kind: 'alerttarget', ...meta('t', tenantId), ...alertTargetFields({ name: 't', type: 'webhook', webhook: { url: 'http://127.0.0.1/' }, ...b }) };
}

test('eventTenant: a flip belongs to its pool\'s tenant (unknown pool: the operator tenant); GitOps events to the operator tenant', () => {
  const cases: { name: string; ev: AlertEvent; want: string }[] = [
    { name: 'default pool', ev: flip('p-eu'), want: 'default' },
    { name: 'acme pool', ev: flip('p-acme'), want: 'acme' },
    { name: 'deleted pool', ev: flip('gone'), want: 'ops' },
    { name: 'rejection', ev: rejected, want: 'ops' },
    { name: 'apply', ev: applied, want: 'ops' },
  ];
  for (const c of cases) assert.equal(eventTenant(c.ev, snap, 'ops'), c.want, c.name);
});

test('targetAccepts: tenancy first, then events, pools and services (by name or id), enabled', () => {
  const cases: { name: string; row: AlertTargetRow; ev: AlertEvent; want: boolean }[] = [
    { name: 'own tenant, no filters', row: target('default'), ev: flip('p-eu'), want: true },
    { name: 'another tenant\'s flip', row: target('default'), ev: flip('p-acme'), want: false },
    { name: 'acme target, acme flip', row: target('acme'), ev: flip('p-acme'), want: true },
    { name: 'acme target, default flip', row: target('acme'), ev: flip('p-eu'), want: false },
    { name: 'pools by name', row: target('default', { pools: ['eu'] }), ev: flip('p-eu'), want: true },
    { name: 'pools by id', row: target('default', { pools: ['p-eu'] }), ev: flip('p-eu'), want: true },
    { name: 'pools: other pool', row: target('default', { pools: ['eu'] }), ev: flip('p-us'), want: false },
    { name: 'pool name of another tenant does not widen', row: target('acme', { pools: ['eu'] }), ev: flip('p-eu'), want: false },
    { name: 'services: pool used by the service', row: target('default', { services: ['www'] }), ev: flip('p-eu'), want: true },
    { name: 'services by id', row: target('default', { services: ['s-www'] }), ev: flip('p-eu'), want: true },
    { name: 'services: pool not used', row: target('default', { services: ['www'] }), ev: flip('p-us'), want: false },
    { name: 'services of another tenant never match', row: target('default', { services: ['s-acme'] }), ev: flip('p-acme'), want: false },
    { name: 'pools and services both narrow', row: target('default', { pools: ['us'], services: ['www'] }), ev: flip('p-us'), want: false },
    { name: 'events without health', row: target('default', { events: ['rejection'] }), ev: flip('p-eu'), want: false },
    { name: 'disabled', row: target('default', { enabled: false }), ev: flip('p-eu'), want: false },
    { name: 'rejection by default', row: target('default'), ev: rejected, want: true },
    { name: 'apply only when asked', row: target('default'), ev: applied, want: false },
    { name: 'apply asked', row: target('default', { events: ['apply'] }), ev: applied, want: true },
    { name: 'pool filters do not apply to GitOps events', row: target('default', { pools: ['eu'], events: ['rejection'] }), ev: rejected, want: true },
    { name: 'a tenant never gets GitOps events', row: target('acme', { events: ['apply', 'rejection'] }), ev: rejected, want: false },
  ];
  for (const c of cases) assert.equal(targetAccepts(c.row, c.ev, eventTenant(c.ev, snap, 'default'), snap), c.want, c.name);
});

test('alertTargetFields: only the type\'s settings, the file\'s defaults, events defaulted and ordered', () => {
  const f = alertTargetFields({ name: 'x', type: 'oncall_b', oncall_b: { apiKey: { env: 'GSLB_ALERT_K' } }, webhook: { url: 'http://h/' }, events: ['rejection', 'health', 'apply'] } as AlertTargetInput);
  assert.deepEqual(f, { name: 'x', type: 'oncall_b', oncall_b: { apiKey: { env: 'GSLB_ALERT_K' }, priority: 'P1', region: 'us' }, pools: [], services: [], events: ['health', 'apply', 'rejection'], enabled: true });
  assert.deepEqual(alertTargetFields({ name: 'y', type: 'email', email: { to: ['a@b.test'] }, events: [] }).events, ['health', 'rejection', 'rollback']);
});

test('alertTargetProblems: settings must match the type; inline secrets are named', () => {
  const cases: { name: string; body: Record<string, unknown>; want: string[] }[] = [
    { name: 'ok', body: { type: 'webhook', webhook: { url: 'u' } }, want: [] },
    { name: 'missing settings', body: { type: 'oncall_a' }, want: ['oncall_a'] },
    { name: 'other type\'s settings', body: { type: 'webhook', webhook: { url: 'u' }, email: { to: [] } }, want: ['email'] },
    { name: 'inline secret', body: { type: 'webhook', webhook: { url: 'u', secret: 'plain' } }, want: ['webhook.secret'] },
    { name: 'inline routing key', body: { type: 'oncall_a', oncall_a: { routingKey: 'plain' } }, want: ['oncall_a.routingKey'] },
  ];
  for (const c of cases) assert.deepEqual(alertTargetProblems(c.body).map((p) => p.path.join('.')), c.want, c.name);
});
