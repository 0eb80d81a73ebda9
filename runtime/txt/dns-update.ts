import { planCombine, planDelete } from '../../core/plan/delta.js';
import type { Plan } from '../../core/plan/types.js';
import type { ServiceRow } from '../../core/model/types.js';
import { GslbError } from '../errors.js';
import { rowsOf } from '../../core/snapshot/snapshot.js';
import { isAtOrUnder, toFqdn } from '../tenancy/names.js';
import { txtValueOf, type TxtRecordRow } from './record.js';
import { planTxtCreate, planTxtReplace, type TxtCore } from './service.js';

/** Response codes of UPDATE (RFC 2136 §2.2, RFC 1035). */
export const UPDATE_RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5, YXDOMAIN: 6, YXRRSET: 7, NXRRSET: 8, NOTAUTH: 9, NOTZONE: 10 } as const;

const IN = 1;
const NONE = 254;
const ANY = 255;
const TXT = 16;
const A = 1;
const AAAA = 28;

/** Who a TSIG key acts for (`dns.update.grants`): its tenant, and optionally the suffixes it may touch. */
export interface UpdateGrant { key: string; tenant: string; suffixes: readonly string[] }

/** One record of an UPDATE's prerequisite or update section (runtime/dns/update-message.ts). */
export interface UpdateRecord { name: string; type: number; cls: number; ttl: number; rdata: Buffer }

/** The outcome: the rcode, and for the log what was refused and why. */
export interface UpdateOutcome { rcode: number; reason?: string; names?: string[] }

const refuse = (rcode: number, reason: string): UpdateOutcome => ({ rcode, reason });

/** What the update may read: the TXT rows and services of the snapshot, by name. */
function namesOf(core: Pick<TxtCore, 'holder'>) {
  const s = core.holder.current;
  const txt = new Map<string, TxtRecordRow>();
  for (const r of rowsOf<TxtRecordRow>(s, 'txtrecord').values()) txt.set(r.name, r);
  const services = new Set<string>();
  for (const r of rowsOf<ServiceRow>(s, 'service').values()) services.add(toFqdn(r.domain));
  return { txt, services };
}

/**
 * Checks the prerequisites (RFC 2136 §3.2) against the running state, TXT record sets and the
 * address sets of services (A/AAAA exist where a service is). Returns the failing outcome, or
 * undefined when all hold.
 */
function checkPrereqs(zone: string, rrs: readonly UpdateRecord[], names: ReturnType<typeof namesOf>): UpdateOutcome | undefined {
  const wanted = new Map<string, Set<string>>();
  const exists = (name: string, type: number) => (type === TXT ? names.txt.has(name) : (type === A || type === AAAA) && names.services.has(name));
  for (const rr of rrs) {
    if (!isAtOrUnder(rr.name, zone)) return refuse(UPDATE_RCODE.NOTZONE, `prerequisite ${rr.name} is outside zone ${zone}`);
    if (rr.cls === ANY || rr.cls === NONE) {
      if (rr.ttl !== 0 || rr.rdata.length !== 0) return refuse(UPDATE_RCODE.FORMERR, 'a class ANY or NONE prerequisite has a TTL or data');
      const inUse = names.txt.has(rr.name) || names.services.has(rr.name);
      if (rr.cls === ANY && rr.type === ANY && !inUse) return refuse(UPDATE_RCODE.NXDOMAIN, `${rr.name} is not in use`);
      if (rr.cls === NONE && rr.type === ANY && inUse) return refuse(UPDATE_RCODE.YXDOMAIN, `${rr.name} is in use`);
      if (rr.cls === ANY && rr.type !== ANY && !exists(rr.name, rr.type)) return refuse(UPDATE_RCODE.NXRRSET, `no RRset of type ${rr.type} at ${rr.name}`);
      if (rr.cls === NONE && rr.type !== ANY && exists(rr.name, rr.type)) return refuse(UPDATE_RCODE.YXRRSET, `an RRset of type ${rr.type} exists at ${rr.name}`);
    } else if (rr.cls === IN) {
      if (rr.ttl !== 0) return refuse(UPDATE_RCODE.FORMERR, 'a value-dependent prerequisite has a TTL');
      if (rr.type !== TXT) return refuse(UPDATE_RCODE.NXRRSET, `value-dependent prerequisites are checked for TXT only (${rr.name} type ${rr.type})`);
      const v = txtValueOf(rr.rdata);
      if ('problem' in v) return v.problem === 'malformed' ? refuse(UPDATE_RCODE.FORMERR, `the TXT data of prerequisite ${rr.name} is malformed`) : refuse(UPDATE_RCODE.NXRRSET, `the TXT set at ${rr.name} differs (a value that is not UTF-8 is never stored)`);
      const set = wanted.get(rr.name) ?? new Set<string>();
      set.add(v.value);
      wanted.set(rr.name, set);
    } else {
      return refuse(UPDATE_RCODE.FORMERR, `prerequisite class ${rr.cls}`);
    }
  }
  // "RRset exists (value dependent)": the whole set, compared as a set (§3.2.3)
  for (const [name, values] of wanted) {
    const have = names.txt.get(name)?.values ?? [];
    if (have.length !== values.size || have.some((v) => !values.has(v))) return refuse(UPDATE_RCODE.NXRRSET, `the TXT set at ${name} differs`);
  }
  return undefined;
}

/**
 * Checks one update record (RFC 2136 §3.4.1) as far as gslbd supports them: TXT records are added
 * (class IN), deleted by value (class NONE) or as a set (class ANY), and `ANY ANY` deletes the
 * TXT set of a name. Addresses are services and change through the API or git, not UPDATE.
 */
function checkUpdate(zone: string, rr: UpdateRecord, grant: UpdateGrant): UpdateOutcome | undefined {
  if (!isAtOrUnder(rr.name, zone)) return refuse(UPDATE_RCODE.NOTZONE, `${rr.name} is outside zone ${zone}`);
  if (grant.suffixes.length > 0 && !grant.suffixes.some((s) => isAtOrUnder(rr.name, toFqdn(s)))) return refuse(UPDATE_RCODE.REFUSED, `key ${grant.key} may not change ${rr.name}`);
  if (rr.cls === IN) return rr.type === TXT ? checkTxtData(rr) : refuse(rr.type === ANY || rr.type >= 249 ? UPDATE_RCODE.FORMERR : UPDATE_RCODE.REFUSED, `only TXT records are updated (type ${rr.type})`);
  if (rr.cls === ANY) {
    if (rr.ttl !== 0 || rr.rdata.length !== 0) return refuse(UPDATE_RCODE.FORMERR, 'a class ANY update has a TTL or data');
    return rr.type === TXT || rr.type === ANY ? undefined : refuse(UPDATE_RCODE.REFUSED, `only TXT records are updated (type ${rr.type})`);
  }
  if (rr.cls === NONE) {
    if (rr.ttl !== 0) return refuse(UPDATE_RCODE.FORMERR, 'a class NONE update has a TTL');
    return rr.type === TXT ? checkTxtData(rr) : refuse(UPDATE_RCODE.REFUSED, `only TXT records are updated (type ${rr.type})`);
  }
  return refuse(UPDATE_RCODE.FORMERR, `update class ${rr.cls}`);
}

/**
 * The data of a TXT record to add or delete: character-strings that fit it (else FORMERR) holding
 * UTF-8 (else REFUSED: values are stored as text, and bytes that are not UTF-8 would come back as
 * U+FFFD, a different record than the client sent).
 */
function checkTxtData(rr: UpdateRecord): UpdateOutcome | undefined {
  const v = txtValueOf(rr.rdata);
  if (!('problem' in v)) return undefined;
  return v.problem === 'malformed'
    ? refuse(UPDATE_RCODE.FORMERR, `the TXT data of ${rr.name} is malformed (a character-string overruns it)`)
    : refuse(UPDATE_RCODE.REFUSED, `the TXT data of ${rr.name} is not UTF-8: values are stored as text`);
}

/** The value of a TXT record `checkTxtData` passed. */
function valueOf(rr: UpdateRecord): string {
  const v = txtValueOf(rr.rdata);
  return 'value' in v ? v.value : '';
}

/**
 * Carries out an RFC 2136 UPDATE of TXT records for `grant`'s tenant (docs/dns.md "Dynamic
 * updates"): the key must have a grant (else REFUSED), the zone must be served (else NOTAUTH),
 * prerequisites must hold, every update must be supported, and the result goes through the one
 * write path as a single plan (all or nothing), under the same name rules as the REST API (a name
 * of another tenant, a reserved name, a git-owned record: REFUSED); a grant to the operator tenant
 * may write the reserved names too. Values keep their order; an added value already present changes
 * only the TTL.
 */
export function applyDnsUpdate(core: TxtCore & { config: { tenancy: { operatorTenant: string } } }, grant: UpdateGrant | undefined, isZone: (name: string) => boolean, u: { zone: string; prereqs: readonly UpdateRecord[]; updates: readonly UpdateRecord[] }): UpdateOutcome {
  if (!grant) return refuse(UPDATE_RCODE.REFUSED, 'unsigned, or signed with a key that has no grant in dns.update.grants');
  const zone = toFqdn(u.zone);
  if (!isZone(zone)) return refuse(UPDATE_RCODE.NOTAUTH, `zone ${zone} is not served here`);
  const names = namesOf(core);
  const pre = checkPrereqs(zone, u.prereqs, names);
  if (pre) return pre;
  for (const rr of u.updates) { const bad = checkUpdate(zone, rr, grant); if (bad) return bad; }
  const work = new Map<string, { values: string[]; ttl: number; row: TxtRecordRow | undefined }>();
  for (const rr of u.updates) {
    let w = work.get(rr.name);
    if (!w) {
      const row = names.txt.get(rr.name);
      if (row && row.tenantId !== grant.tenant) return refuse(UPDATE_RCODE.REFUSED, `${rr.name} is not available`);
      w = { values: [...(row?.values ?? [])], ttl: row?.ttl ?? 0, row };
      work.set(rr.name, w);
    }
    if (rr.cls === IN) {
      const v = valueOf(rr);
      if (!w.values.includes(v)) w.values.push(v);
      w.ttl = rr.ttl;
    } else if (rr.cls === ANY) {
      w.values = [];
    } else {
      const v = valueOf(rr);
      w.values = w.values.filter((x) => x !== v);
    }
  }
  // a key of the operator tenant may also write the system's reserved names (the apex), as the system key can over REST
  const viewer = { tenantId: grant.tenant === core.config.tenancy.operatorTenant ? null : grant.tenant };
  const revision = core.apiRevision();
  const plans: Plan[] = [];
  try {
    for (const [name, w] of work) {
      const body = { name, values: w.values, ttl: w.ttl };
      if (!w.row && w.values.length > 0) plans.push(planTxtCreate(core, viewer, grant.tenant, body, revision).plan);
      else if (w.row && w.values.length === 0) plans.push(planDelete(core.holder.current, w.row, revision));
      else if (w.row && (w.ttl !== w.row.ttl || w.values.join('\0') !== w.row.values.join('\0'))) plans.push(planTxtReplace(core, viewer, w.row, body, revision));
    }
  } catch (err) {
    if (err instanceof GslbError) return refuse(UPDATE_RCODE.REFUSED, err.message);
    throw err;
  }
  if (plans.length > 0) core.apply(planCombine(core.holder.current, plans, revision));
  return { rcode: UPDATE_RCODE.NOERROR, names: [...work.keys()] };
}
