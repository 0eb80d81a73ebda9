import type { Core } from '../app.js';
import type { ServiceRow } from '../../core/model/types.js';
import { planCreate, planDelete, planUpdate } from '../../core/plan/delta.js';
import type { Plan } from '../../core/plan/types.js';
import { getRow, rowsOf, type Snapshot } from '../../core/snapshot/snapshot.js';
import { badRequest, conflict } from '../errors.js';
import { checkNameClaim, checkSuffix, isAtOrUnder, nameRefusalError, nameRules, toFqdn, type NamedService } from '../tenancy/names.js';
import { requireRow, type Viewer } from '../tenancy/visibility.js';
import { txtFields, type TxtRecordRow } from './record.js';

/** What a TXT write needs of the core. */
export type TxtCore = Pick<Core, 'holder' | 'apply' | 'apiRevision' | 'newId' | 'config'>;

/** A TXT record body as the REST API and RFC 2136 UPDATE hand it over. */
export interface TxtBody { name: string; values: readonly string[]; ttl?: number | undefined }

/**
 * Who may put a TXT record at `name` for `tenant` (docs/dns.md "TXT records"). The name must not be a
 * public suffix (runtime/tenancy/public-suffix.ts), and must lie in
 * a zone gslbd serves: dns.domain, or a service name outside it of the same tenant (a zone of its
 * own). Then the name rules of services apply (runtime/tenancy/names.ts: reserved names,
 * delegations, first come across tenants), against other tenants' services and TXT records; the
 * tenant's own service at the name is no conflict (a TXT record beside an address). One record
 * set per name: a second row at a name is 409. Throws 400, 403 or 409.
 */
export function checkTxtName(core: Pick<Core, 'config'>, s: Snapshot, viewer: Viewer, tenant: string, name: string, selfId?: string): void {
  const n = toFqdn(name);
  // a public suffix is named as such, before the zone rule would call it merely outside every zone
  const ps = checkSuffix(nameRules(core.config), n);
  if (!ps.ok) throw nameRefusalError(ps);
  const domain = core.config.dns.domain ? toFqdn(core.config.dns.domain) : undefined;
  const others: NamedService[] = [];
  let inZone = domain !== undefined && isAtOrUnder(n, domain);
  for (const svc of rowsOf<ServiceRow>(s, 'service').values()) {
    if (svc.tenantId !== tenant) others.push(svc);
    else if (!inZone && isAtOrUnder(n, toFqdn(svc.domain))) inZone = true;
  }
  if (!inZone) throw badRequest(`name: ${n} is outside every zone this server serves (${domain ?? 'no dns.domain'}, or a service name of yours outside it)`);
  for (const t of rowsOf<TxtRecordRow>(s, 'txtrecord').values()) {
    if (t.id === selfId) continue;
    if (t.tenantId === tenant && t.name === n) throw conflict(`name ${n} already has TXT record ${t.id}: change its values instead`);
    if (t.tenantId !== tenant) others.push({ id: t.id, name: `TXT ${t.name}`, domain: t.name, tenantId: t.tenantId, origin: t.origin });
  }
  const v = checkNameClaim(nameRules(core.config), { name: n, tenant, principalTenant: viewer.tenantId, selfId }, others);
  if (!v.ok) throw nameRefusalError(v);
}

/** The plan creating a TXT record of `tenant`, checked (400, 403, 409), and the new row's id. Pure apart from the id. */
export function planTxtCreate(core: Omit<TxtCore, 'apply'>, viewer: Viewer, tenant: string, body: TxtBody, revision: string): { plan: Plan; id: string } {
  const f = txtFields(body);
  checkTxtName(core, core.holder.current, viewer, tenant, f.name);
  const row: TxtRecordRow = { kind: 'txtrecord', id: core.newId(), ...f, origin: 'api', revision: '', tenantId: tenant };
  return { plan: planCreate(core.holder.current, row, revision), id: row.id };
}

/** The plan replacing the name, values and ttl of `cur`, checked (400, 403, 409 for a git row). */
export function planTxtReplace(core: Omit<TxtCore, 'apply'>, viewer: Viewer, cur: TxtRecordRow, body: TxtBody, revision: string): Plan {
  const f = txtFields(body);
  checkTxtName(core, core.holder.current, viewer, cur.tenantId, f.name, cur.id);
  return planUpdate(core.holder.current, cur, { ...cur, ...f }, revision);
}

/** Creates a TXT record of `tenant` through the one write path; returns the stored row. */
export function createTxt(core: TxtCore, viewer: Viewer, tenant: string, body: TxtBody): TxtRecordRow {
  const { plan, id } = planTxtCreate(core, viewer, tenant, body, core.apiRevision());
  return getRow<TxtRecordRow>(core.apply(plan), 'txtrecord', id)!;
}

/** Replaces the name, values and ttl of a visible TXT record (409 for a git row). */
export function replaceTxt(core: TxtCore, viewer: Viewer, id: string, body: TxtBody): TxtRecordRow {
  const cur = requireRow<TxtRecordRow>(core.holder.current, viewer, 'txtrecord', id, 'TXT record');
  return getRow<TxtRecordRow>(core.apply(planTxtReplace(core, viewer, cur, body, core.apiRevision())), 'txtrecord', id)!;
}

/** Deletes a visible TXT record (409 for a git row). */
export function deleteTxt(core: TxtCore, viewer: Viewer, id: string): void {
  const cur = requireRow<TxtRecordRow>(core.holder.current, viewer, 'txtrecord', id, 'TXT record');
  core.apply(planDelete(core.holder.current, cur, core.apiRevision()));
}
