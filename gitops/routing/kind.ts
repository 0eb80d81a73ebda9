import { positionOf } from '../../runtime/config/yaml-source.js';
import { API_VERSION, type Manifest, type ResourceKind } from '../../runtime/ports/kinds.js';

/** What a routing test case expects (schemas/routingtest.v1.schema.json). */
export interface RoutingExpect { answers?: string[]; ordered?: boolean; rcode?: string; oneOf?: string[] }

/** One routing test case, with the file and line it was declared at. */
export interface RoutingCase {
  name: string;
  /** the RoutingTest manifest's name */
  test: string;
  file: string;
  line: number;
  col: number;
  query: { name: string; type?: 'A' | 'AAAA'; clientIp?: string; ecsSubnet?: string };
  assumeHealth: { pool: string; ipAddress: string; healthy: boolean }[];
  expect: RoutingExpect;
}

type CaseSpec = Omit<RoutingCase, 'test' | 'file' | 'line' | 'col' | 'assumeHealth'> & { assumeHealth?: RoutingCase['assumeHealth'] };
const casesOf = (m: Manifest): CaseSpec[] => (Array.isArray(m.spec.cases) ? (m.spec.cases as CaseSpec[]) : []);

/**
 * `kind: RoutingTest` (docs/gitops.md "Routing tests"): cases run against the revision being
 * checked; it creates no rows. Beyond the schema: case names are unique per manifest, and
 * `ordered` needs `answers`.
 */
export const routingTestKind: ResourceKind = {
  kind: 'RoutingTest',
  apiVersion: API_VERSION,
  schema: 'routingtest.v1.schema.json',
  rows: [],
  routes: 'gitops/routes.ts',
  map: () => [],
  check(m, _index, _env, report) {
    const seen = new Set<string>();
    casesOf(m).forEach((c, i) => {
      if (typeof c?.name === 'string') {
        if (seen.has(c.name)) report(['spec', 'cases', i, 'name'], `case "${c.name}" is already declared in this RoutingTest; case names are unique per manifest`);
        seen.add(c.name);
      }
      if (c?.expect?.ordered && !Array.isArray(c.expect.answers)) report(['spec', 'cases', i, 'expect', 'ordered'], 'ordered needs answers');
    });
  },
};

/**
 * The cases of every RoutingTest manifest, in file order, each with its file, line and column. Call on
 * manifests that validated. Pure.
 */
export function routingCasesOf(manifests: readonly Manifest[]): RoutingCase[] {
  const out: RoutingCase[] = [];
  for (const m of manifests) {
    if (m.kind !== 'RoutingTest') continue;
    casesOf(m).forEach((c, i) => {
      const pos = positionOf(m.src, ['spec', 'cases', i]);
      out.push({
        name: c.name, test: m.name, file: m.file, line: pos?.line ?? 0, col: pos?.col ?? 0,
        query: c.query, assumeHealth: c.assumeHealth ?? [], expect: c.expect,
      });
    });
  }
  return out;
}
