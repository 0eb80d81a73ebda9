import { geoRuleFields, healthCheckFields, memberCreateFields } from '../../core/model/normalize.js';
import { scriptRefusal, type ScriptPolicy } from '../../core/model/script-policy.js';
import type { DesiredRow } from '../../core/plan/types.js';
import { registerManifestKind, type Report } from './kinds.js';

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
registerManifestKind({
  kind: 'Pool',
  schema: 'pool.v1.schema.json',
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
});
