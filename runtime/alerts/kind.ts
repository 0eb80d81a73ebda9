import { secretRefProblem } from './secret-ref.js';
import { ALERT_TARGET_KIND, alertTargetFields, alertTargetProblems, secretRefsOf, type AlertTargetInput } from './target-row.js';
import { DEFAULT_TENANT } from '../../core/model/types.js';
import { API_VERSION, type ResourceKind } from '../ports/kinds.js';

/**
 * `kind: AlertTarget` → one `alerttarget` row of the operator's (`default`) tenant (docs/alerts.md
 * "Alert targets as resources"), keyed by `metadata.name`, with the REST API's defaults. The
 * settings key must match `spec.type`; secret references must follow the name and folder rules
 * and, on the daemon (not offline), be readable there, each reported at the manifest's file and
 * line.
 */
export const alertTargetKind: ResourceKind = {
  kind: 'AlertTarget',
  apiVersion: API_VERSION,
  schema: 'alerttarget.v1.schema.json',
  schemaRefs: ['api-alerttargets.v1.schema.json'],
  rows: [ALERT_TARGET_KIND],
  routes: 'runtime/alerts/routes.ts',
  map(m) {
    return [{ kind: ALERT_TARGET_KIND, key: m.name, source: m.file, fields: { ...alertTargetFields({ ...(m.spec as Omit<AlertTargetInput, 'name'>), name: m.name }) } }];
  },
  check(m, _index, env, report) {
    for (const p of alertTargetProblems(m.spec)) report(['spec', ...p.path], p.rule);
    const secrets = env.alertSecrets;
    if (!secrets || typeof m.spec.type !== 'string') return;
    for (const { path, ref } of secretRefsOf(alertTargetFields({ ...(m.spec as Omit<AlertTargetInput, 'name'>), name: m.name }))) {
      if (!ref || typeof ref !== 'object') continue;
      const why = secretRefProblem(ref, DEFAULT_TENANT, secrets.policy, secrets.present);
      if (why) report(['spec', ...path], why);
    }
  },
};
