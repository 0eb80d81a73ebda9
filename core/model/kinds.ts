import { fieldOf, type Row } from './types.js';

/**
 * The registry of row kinds. A kind names its parent (for cascading deletes and indexes) and its
 * place in apply order. Adding a kind is one `registerKind` call plus a schema and, for git, a
 * manifest mapper.
 */
export interface KindInfo {
  kind: string;
  /** apply order: lower is created first and deleted last */
  order: number;
  /** field holding the parent's id, and the parent's kind (children are deleted with the parent) */
  parent?: { field: string; kind: string };
  /** fields of other kinds that reference this kind and are set to null when it is deleted */
  nullifiedBy?: { kind: string; field: string }[];
  /** human label used in diffs and errors (`pool "eu"`); never built from a secret field */
  label: (row: Row) => string;
  /** fields holding secrets (hashes, sealed keys): plan renderings show `[redacted]` instead */
  secretFields?: readonly string[];
  /** the name a row of this kind holds alone (docs/cluster.md "Unique names") */
  unique?: UniqueName;
}

/** Who holds a unique name: the row's id, tenant and `name` field (as a reservation records them). */
export interface UniqueHolder {
  id: string;
  tenantId: string;
  rowName: string;
}

/**
 * A kind's unique name: `of` gives a row's scope (a tenant id, or '' for one name across all
 * tenants) and normalised name, or undefined when the row holds none; `taken` is the 409 message a
 * claimant gets when `holder` has the name (the same text as the feature's own check).
 */
export interface UniqueName {
  of: (row: Row) => { scope: string; name: string } | undefined;
  taken: (claimant: Row, holder: UniqueHolder) => string;
}

const f = (row: Row, k: string) => String(fieldOf(row, k));

const registry = new Map<string, KindInfo>();

/** Registers or replaces a kind. */
export function registerKind(info: KindInfo): void {
  registry.set(info.kind, info);
  secretSets.delete(info.kind);
}

/** The kind's registration; throws for an unknown kind. */
export function kindInfo(kind: string): KindInfo {
  const k = registry.get(kind);
  if (!k) throw new Error(`unknown resource kind "${kind}"`);
  return k;
}

const NO_SECRETS: ReadonlySet<string> = new Set();
const secretSets = new Map<string, ReadonlySet<string>>();

/** The secret fields of a kind (empty for unknown kinds and kinds without secrets). */
export function secretFieldsOf(kind: string): ReadonlySet<string> {
  let set = secretSets.get(kind);
  if (!set) {
    const fields = registry.get(kind)?.secretFields;
    set = fields && fields.length > 0 ? new Set(fields) : NO_SECRETS;
    if (registry.has(kind)) secretSets.set(kind, set);
  }
  return set;
}

/** All registered kinds in apply order. */
export function allKinds(): KindInfo[] {
  return [...registry.values()].sort((a, b) => a.order - b.order);
}

const fqdn = (name: string) => { const n = name.toLowerCase(); return n.endsWith('.') ? n : `${n}.`; };
/** One name per tenant (form API key names), or across tenants (`scope` '': e-mail addresses, domains, hosts). */
const perTenant = (field: string, norm: (v: string) => string = (v) => v) => (r: Row) => ({ scope: r.tenantId, name: norm(f(r, field)) });
const global = (field: string, norm: (v: string) => string) => (r: Row) => ({ scope: '', name: norm(f(r, field)) });

// Pool names are not unique (a pool is known by its id; two pools may share a name, as they always could).
registerKind({ kind: 'pool', order: 10, nullifiedBy: [{ kind: 'service', field: 'poolId' }], label: (r) => `pool "${f(r, 'name')}"` });
registerKind({ kind: 'healthcheck', order: 20, parent: { field: 'poolId', kind: 'pool' }, label: (r) => `healthcheck of pool ${f(r, 'poolId')}` });
registerKind({ kind: 'member', order: 30, parent: { field: 'poolId', kind: 'pool' }, label: (r) => `member ${f(r, 'ipAddress')}:${f(r, 'port')}` });
registerKind({ kind: 'georule', order: 40, parent: { field: 'poolId', kind: 'pool' }, label: (r) => `georule ${f(r, 'cidr')} -> ${f(r, 'endpoint')}` });
registerKind({
  kind: 'service', order: 50, label: (r) => `service "${f(r, 'name')}"`,
  // runtime/tenancy/names.ts checkNameClaim: the same name on another row; another tenant's row is never named
  unique: {
    of: global('domain', fqdn),
    taken: (c, h) => (h.tenantId === c.tenantId ? `domain ${fqdn(f(c, 'domain'))} is already served by service "${h.rowName}" (${h.id})` : `domain ${fqdn(f(c, 'domain'))} is not available`),
  },
});
// A TXT record set at one name (docs/dns.md "TXT records").
registerKind({ kind: 'txtrecord', order: 55, label: (r) => `TXT record ${f(r, 'name')}` });
// HTTP redirect rules (docs/redirects.md): one row per host, no parent.
registerKind({
  kind: 'redirect', order: 56, label: (r) => `redirect ${f(r, 'host')}`,
  // runtime/redirect/ownership.ts: one rule per host; another tenant's host is "not available"
  unique: {
    of: global('host', (h) => h.toLowerCase().replace(/\.$/, '')),
    taken: (c, h) => (h.tenantId === c.tenantId ? `host: ${f(c, 'host')} already has a redirect rule (${h.id})` : `host: domain ${fqdn(f(c, 'host').replace(/^\*\./, ''))} is not available`),
  },
});
// Alert subscriptions (docs/alerts.md "Alert targets as resources"): secrets are references (an
// env name or a file path), never values, so no field needs redacting.
registerKind({ kind: 'alerttarget', order: 57, label: (r) => `alert target "${f(r, 'name')}"` });
// The auth part's rows (docs/auth.md "Storage"). Users and keys name their tenant in `tenantId`
// but are not registered as its children: the `default` tenant is built in (not a row, so a new
// database has no rows at all), config sync must not drop a user of it, and tenants are never
// deleted. Labels name e-mail addresses and key names only, never a hash or a secret.
registerKind({ kind: 'tenant', order: 1, label: (r) => `tenant "${r.id}"` });
registerKind({
  kind: 'user', order: 2, label: (r) => `user ${f(r, 'email')}`, secretFields: ['passwordHash', 'totpSecret', 'totpPending'],
  // runtime/auth/routes/users.ts: one user per address in all tenants, case-insensitive
  unique: { of: global('email', (e) => e.trim().toLowerCase()), taken: (c) => `a user with e-mail ${f(c, 'email')} already exists` },
});
registerKind({ kind: 'apikey', order: 3, label: (r) => `API key "${f(r, 'name')}" of tenant ${r.tenantId}`, secretFields: ['keyHash'] });
// Mail settings (docs/alerts.md "Mail settings"): `mail:system` server-wide, `mail:<tenantId>` per tenant; the sealed password is secret.
registerKind({ kind: 'mailsettings', order: 4, label: (r) => `mail settings ${r.id}`, secretFields: ['password'] });
// The form service's rows (docs/forms.md): a form belongs to a workspace (tenant); its actions are
// its children and go with it. An action's config may hold secrets (webhook URLs, tokens), so plan
// renderings redact the config whole.
registerKind({ kind: 'form', order: 60, label: (r) => `form "${f(r, 'name')}"` });
registerKind({ kind: 'formaction', order: 61, parent: { field: 'formId', kind: 'form' }, label: (r) => `${f(r, 'type')} action of form ${f(r, 'formId')}`, secretFields: ['config'] });
// Form-service API keys (docs/forms.md): a workspace's key, only its SHA-256 stored; no parent, so a
// single-form key whose form is deleted keeps naming that form and reaches nothing.
// A workspace's custom domain for its forms' public address (docs/forms.md "Domains"); the
// verification token is not a secret (it is published in DNS).
registerKind({
  kind: 'formdomain', order: 63, label: (r) => `form domain ${f(r, 'hostname')} of tenant ${r.tenantId}`,
  // runtime/forms/domains/service.ts: a host name belongs to one workspace
  unique: {
    of: global('hostname', (h) => h.trim().toLowerCase().replace(/\.$/, '')),
    taken: (c, h) => (h.tenantId === c.tenantId ? `domain ${f(c, 'hostname')} is already registered (${h.id})` : `domain ${f(c, 'hostname')} is registered by another workspace`),
  },
});
registerKind({
  kind: 'formkey', order: 62, label: (r) => `form API key "${f(r, 'name')}" of tenant ${r.tenantId}`, secretFields: ['keyHash'],
  // runtime/forms/keys/store.ts: one key name per workspace
  unique: { of: perTenant('name'), taken: (c) => `an API key named "${f(c, 'name')}" already exists` },
});
