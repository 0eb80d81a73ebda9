import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptySnapshot, nextSnapshot } from '../../../core/snapshot/snapshot.js';
import { messageTenant } from '../../../runtime/ws/tenant.js';
import type { Row } from '../../../core/model/types.js';

const s = nextSnapshot(emptySnapshot(), [
  { op: 'put', row: { kind: 'pool', id: 'p1', name: 'a', origin: 'api', revision: 'r', tenantId: 't1' } as Row },
  { op: 'put', row: { kind: 'service', id: 's1', name: 's', domain: 's.example.', origin: 'api', revision: 'r', tenantId: 't2' } as Row },
  { op: 'put', row: { kind: 'form', id: 'f1', name: 'Contact', origin: 'api', revision: 'r', tenantId: 't3' } as Row },
], 'r', 0);

test('messageTenant: resolves the owning tenant per message type', () => {
  const rows: { name: string; msg: { type: string; payload: unknown }; want: string | null | undefined }[] = [
    { name: 'health_update by pool', msg: { type: 'health_update', payload: { poolId: 'p1' } }, want: 't1' },
    { name: 'member_update by pool', msg: { type: 'member_update', payload: { poolId: 'p1', member: {} } }, want: 't1' },
    { name: 'pool_update by pool id', msg: { type: 'pool_update', payload: { pool: { id: 'p1' } } }, want: 't1' },
    { name: 'service_update by service id', msg: { type: 'service_update', payload: { service: { id: 's1' } } }, want: 't2' },
    { name: 'the static pool is the system\'s: tenant default, like the config repo\'s rows', msg: { type: 'health_update', payload: { poolId: 'static' } }, want: 'default' },
    { name: 'unknown pool is nobody\'s', msg: { type: 'health_update', payload: { poolId: 'nope' } }, want: undefined },
    { name: 'submission.created by form', msg: { type: 'submission.created', payload: { form_id: 'f1', submission_id: 1 } }, want: 't3' },
    { name: 'submission.claimed by form', msg: { type: 'submission.claimed', payload: { form_id: 'f1', submission_id: 1, by: 'x' } }, want: 't3' },
    { name: 'a submission of an unknown form is nobody\'s', msg: { type: 'submission.created', payload: { form_id: 'nope' } }, want: undefined },
    { name: 'a GitOps rejection is the system\'s: no tenant sees it', msg: { type: 'gitops_rejected', payload: { revision: 'r', reason: 'ManifestsInvalid', problems: [] } }, want: undefined },
    { name: 'a GitOps rollback is the system\'s: no tenant sees it', msg: { type: 'gitops_rollback', payload: { revision: 'r' } }, want: undefined },
    { name: 'resource-free message is everyone\'s', msg: { type: 'stats_update', payload: {} }, want: null },
  ];
  for (const r of rows) assert.equal(messageTenant(r.msg, [s]), r.want, r.name);
});

test('messageTenant: a deleted row is found in the previous snapshot', () => {
  const after = nextSnapshot(s, [{ op: 'delete', kind: 'pool', id: 'p1' }], 'r2', 1);
  assert.equal(messageTenant({ type: 'pool_update', payload: { pool: { id: 'p1' } } }, [after]), undefined);
  assert.equal(messageTenant({ type: 'pool_update', payload: { pool: { id: 'p1' } } }, [after, s]), 't1');
});
