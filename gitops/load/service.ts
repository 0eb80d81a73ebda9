import { canonicalAlgorithm, serviceFields } from '../../core/model/normalize.js';
import { firstByKey, registerManifestKind, type ManifestIndex } from './kinds.js';
import { poolKeys } from './pool.js';

type Obj = Record<string, unknown>;

/** The first Service declaring each (lower-cased) domain. */
const firstByDomain = (index: ManifestIndex) => firstByKey(index, 'Service', (m) => String(m.spec.domain).toLowerCase());
const list = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);

/**
 * `kind: Service` → one service row; `spec.pool` names a Pool manifest and becomes a reference the
 * planner resolves to the pool's id. Defaults are the REST API's.
 */
registerManifestKind({
  kind: 'Service',
  schema: 'service.v1.schema.json',
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
});
