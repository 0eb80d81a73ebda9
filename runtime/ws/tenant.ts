import { DEFAULT_TENANT, type Row } from '../../core/model/types.js';
import { getRow, type Snapshot } from '../../core/snapshot/snapshot.js';
import { STATIC_POOL_ID } from '../config/static-pool.js';

/** `undefined`: the resource is unknown (nobody tenant-bound sees it); `null`: everyone may see it. */
export type MessageTenant = string | null | undefined;

function tenantOfRow(kind: string, id: unknown, snapshots: readonly Snapshot[]): MessageTenant {
  if (typeof id !== 'string') return undefined;
  // the config file's static pool is the system's, in its tenant like the config repo's rows
  if (kind === 'pool' && id === STATIC_POOL_ID) return DEFAULT_TENANT;
  for (const s of snapshots) {
    const row = getRow<Row>(s, kind, id);
    if (row) return row.tenantId;
  }
  return undefined;
}

/**
 * The tenant a live message belongs to, looked up in the given snapshots in order (the current one,
 * then the one before the last plan, which still holds rows that plan deleted). Messages without a
 * resource (statistics) are not routed through here.
 */
export function messageTenant(msg: { type: string; payload: unknown }, snapshots: readonly Snapshot[]): MessageTenant {
  const p = (msg.payload ?? {}) as Record<string, unknown>;
  const idOf = (o: unknown) => (o && typeof o === 'object' ? (o as { id?: unknown }).id : undefined);
  switch (msg.type) {
    case 'health_update':
    case 'member_update':
      return tenantOfRow('pool', p.poolId, snapshots);
    case 'pool_update':
      return tenantOfRow('pool', idOf(p.pool), snapshots);
    case 'service_update':
      return tenantOfRow('service', idOf(p.service), snapshots);
    case 'submission.created':
    case 'submission.claimed':
      return tenantOfRow('form', p.form_id, snapshots);
    case 'gitops_rejected':
    case 'gitops_rollback':
      // the config repo is the system's (its problems name files and rows of every tenant), and a
      // breach counts every tenant's members: no tenant-bound connection sees these
      return undefined;
    default:
      return null;
  }
}
