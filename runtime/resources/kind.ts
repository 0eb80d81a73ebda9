import { canonicalAlgorithm, geoRuleFields, healthCheckFields, memberCreateFields, serviceFields } from '../../core/model/normalize.js';
import { scriptRefusal, type ScriptPolicy } from '../config/script-policy.js';
import { DEFAULT_TENANT, type ServiceRow } from '../../core/model/types.js';
import type { DesiredRow } from '../../core/plan/types.js';
import { rowsOf } from '../../core/snapshot/snapshot.js';
import { toFqdn } from '../tenancy/names.js';
import { API_VERSION, firstByKey, type ManifestIndex, type Report, type ResourceKind } from '../ports/kinds.js';

type Obj = Record<string, unknown>;
const list = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);
/** Fields the REST API accepts and ignores; in a manifest they would only mislead. */
const READ_ONLY = ['poolId', 'id', 'origin', 'revision', 'source'];
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * The script rule of a manifest's health check under the daemon's policy (docs/health.md "Script
 * checks"): git may define script checks, but only where `health.allowScripts` is true and with a
 * `scriptPath` inside `health.scriptDirs`. Reports at the field that carries the script.
 */
function checkScript(hc: Obj, policy: ScriptPolicy, report: Report): void {
  const fields = { type: typeof hc.type === 'string' ? hc.type : 'tcp', scriptPath: text(hc.scriptPath), scriptContent: text(hc.scriptContent) };
  const refusal = scriptRefusal(fields, policy);
  if (!refusal) return;
  const at = policy.allow ? 'scriptPath' : fields.type === 'script' ? 'type' : fields.scriptContent ? 'scriptContent' : 'scriptPath';
  report(['spec', 'healthCheck', at], refusal.reason);
}

/** Natural keys of pool rows (DESIGN decision 4): the planner matches on these. */
export const poolKeys = {
  pool: (pool: string) => pool,
  member: (pool: string, ip: string, port: number) => `${pool}/${ip}:${port}`,
  healthcheck: (pool: string) => pool,
  georule: (pool: string, cidr: string, endpoint: string) => `${pool}/${cidr}/${endpoint}`,
};

/**
 * `kind: Pool` → one pool row, a member row per `spec.members[]`, a health check row when
 * `spec.healthCheck` is set, and a geo rule row per `spec.geoRules[]`. Field defaults are the
 * REST API's (core/model/normalize.ts).
 */
export const poolKind: ResourceKind = {
  kind: 'Pool',
  apiVersion: API_VERSION,
  schema: 'pool.v1.schema.json',
  schemaRefs: ['resources.v1.schema.json'],
  rows: ['pool', 'healthcheck', 'member', 'georule'],
  routes: 'runtime/resources/routes/pools.ts',
  map(m) {
    const name = m.name;
    const source = m.file;
    const parent = [{ field: 'poolId', kind: 'pool', key: poolKeys.pool(name) }];
    const rows: DesiredRow[] = [{ kind: 'pool', key: poolKeys.pool(name), fields: { name }, source }];
    if (m.spec.healthCheck && typeof m.spec.healthCheck === 'object') {
      rows.push({ kind: 'healthcheck', key: poolKeys.healthcheck(name), fields: { ...healthCheckFields(m.spec.healthCheck as Obj) }, refs: parent, source });
    }
    for (const mem of list(m.spec.members)) {
      const f = memberCreateFields(mem);
      rows.push({ kind: 'member', key: poolKeys.member(name, f.ipAddress, f.port), fields: { ...f }, refs: parent, source });
    }
    for (const g of list(m.spec.geoRules)) {
      const f = geoRuleFields(g);
      rows.push({ kind: 'georule', key: poolKeys.georule(name, f.cidr, f.endpoint), fields: { ...f }, refs: parent, source });
    }
    return rows;
  },
  check(m, _index, env, report) {
    const seen = new Map<string, number>();
    list(m.spec.members).forEach((mem, i) => {
      for (const k of READ_ONLY) if (k in mem) report(['spec', 'members', i, k], `"${k}" is set by the controller; remove it from the manifest`);
      const k = `${String(mem.ipAddress)}:${String(mem.port)}`;
      const first = seen.get(k);
      if (first !== undefined) report(['spec', 'members', i], `member ${k} is listed twice in pool "${m.name}" (first at members[${first}]); ip:port must be unique per pool`);
      else seen.set(k, i);
    });
    const ips = new Set(list(m.spec.members).map((x) => String(x.ipAddress)));
    const rules = new Map<string, number>();
    list(m.spec.geoRules).forEach((g, i) => {
      for (const k of READ_ONLY) if (k in g) report(['spec', 'geoRules', i, k], `"${k}" is set by the controller; remove it from the manifest`);
      const k = `${String(g.cidr)} -> ${String(g.endpoint)}`;
      if (rules.has(k)) report(['spec', 'geoRules', i], `geo rule ${k} is listed twice (first at geoRules[${rules.get(k)}])`);
      else rules.set(k, i);
      if (!ips.has(String(g.endpoint))) report(['spec', 'geoRules', i, 'endpoint'], `must be the ipAddress of a member of pool "${m.name}"`);
    });
    const hc = m.spec.healthCheck as Obj | undefined;
    if (hc) {
      if (hc.type === 'script' && !hc.scriptPath && !hc.scriptContent) report(['spec', 'healthCheck'], 'scriptPath or scriptContent is required when type is script');
      if (hc.type === 'webhook' && !hc.webhookURL) report(['spec', 'healthCheck', 'webhookURL'], 'required when type is webhook');
      const interval = typeof hc.intervalMs === 'number' && hc.intervalMs > 0 ? hc.intervalMs : 10000;
      const timeout = typeof hc.timeoutMs === 'number' && hc.timeoutMs > 0 ? hc.timeoutMs : 2000;
      if (timeout > interval) report(['spec', 'healthCheck', 'timeoutMs'], `must not exceed intervalMs (${interval})`);
      if (env.scripts) checkScript(hc, env.scripts, report);
    }
  },
};

/** The first Service declaring each (lower-cased) domain. */
const firstByDomain = (index: ManifestIndex) => firstByKey(index, 'Service', (m) => String(m.spec.domain).toLowerCase());

/**
 * `kind: Service` → one service row; `spec.pool` names a Pool manifest and becomes a reference the
 * planner resolves to the pool's id. Defaults are the REST API's.
 */
export const serviceKind: ResourceKind = {
  kind: 'Service',
  apiVersion: API_VERSION,
  schema: 'service.v1.schema.json',
  schemaRefs: ['resources.v1.schema.json'],
  rows: ['service'],
  routes: 'runtime/resources/routes/services.ts',
  map(m) {
    const pool = typeof m.spec.pool === 'string' ? m.spec.pool : null;
    const fields = serviceFields({ ...m.spec, name: m.name, poolId: null });
    return [{
      kind: 'service', key: m.name, fields: { ...fields }, source: m.file,
      refs: [{ field: 'poolId', kind: 'pool', key: pool === null ? null : poolKeys.pool(pool) }],
    }];
  },
  check(m, index, env, report) {
    const s = m.spec;
    const algo = canonicalAlgorithm(s.algorithm);
    const poolName = typeof s.pool === 'string' ? s.pool : undefined;
    const pool = poolName === undefined ? undefined : index.get('Pool')?.get(poolName);
    if (poolName !== undefined && !pool) report(['spec', 'pool'], `no Pool named "${poolName}" in the repo`);
    const members = new Set(list(pool?.spec.members).map((x) => String(x.ipAddress)));
    const asnRules = list(s.asnRules);
    if (algo === 'asn') {
      if (asnRules.length === 0) report(['spec', 'asnRules'], 'at least one rule is required when algorithm is asn');
      if (env.asnDb === false) report(['spec', 'algorithm'], 'algorithm asn needs loadbalancer.asn.dbPath in the daemon configuration');
    }
    const chain = Array.isArray(s.chain) ? (s.chain as string[]) : [];
    if (env.geoipDb === false && (algo === 'geo-ip' || chain.includes('geo-ip'))) {
      report(['spec', algo === 'geo-ip' ? 'algorithm' : 'chain'], 'geo-ip needs loadbalancer.geoip.dbPath in the daemon configuration');
    }
    if (algo === 'map-file' && pool && list(pool.spec.geoRules).length === 0) report(['spec', 'algorithm'], `map-file needs geoRules in pool "${poolName}"`);
    const dup = new Set<string>();
    chain.forEach((c, i) => { if (dup.has(c)) report(['spec', 'chain', i], `step "${c}" appears twice`); dup.add(c); });
    const first = firstByDomain(index).get(String(s.domain).toLowerCase());
    if (first && first !== m) report(['spec', 'domain'], `domain is already served by Service "${first.name}" (${first.file})`);
    if (pool) {
      asnRules.forEach((r, i) => {
        if (!members.has(String(r.endpoint))) report(['spec', 'asnRules', i, 'endpoint'], `must be the ipAddress of a member of pool "${poolName}"`);
      });
    }
  },
  claim: (m) => (typeof m.spec.domain === 'string' ? { name: m.spec.domain, field: 'domain', what: 'services' } : undefined),
  rowClaims: {
    noun: 'service',
    claim: (d) => ({ name: toFqdn(String(d.fields.domain)), label: `Service "${d.key}": domain` }),
    against(actual) {
      const api = new Map<string, ServiceRow>();
      const foreign: ServiceRow[] = [];
      for (const s of rowsOf<ServiceRow>(actual, 'service').values()) {
        if (s.origin === 'git') continue;
        api.set(toFqdn(s.domain), s);
        if (s.tenantId !== DEFAULT_TENANT) foreign.push(s);
      }
      return {
        foreign,
        clash(_d, name) {
          const taken = api.get(name);
          if (!taken) return undefined;
          return taken.tenantId === DEFAULT_TENANT
            ? `is already served by service "${taken.name}" created over the REST API; delete it there first`
            : 'is not available: a service of another tenant uses it';
        },
      };
    },
  },
};
