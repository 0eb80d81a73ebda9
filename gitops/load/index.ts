/** The manifest loader: parsing into manifests; the kinds they may be are the registry's (gitops/kinds/). */
export { loadManifests, problemAt, type Manifest } from './manifest.js';
export type { ResourceKind, ValidationEnv } from '../../runtime/ports/kinds.js';
// RoutingTest is GitOps's own kind (gitops/routing/kind.ts); re-exported for the reconcile steps
export { routingCasesOf, type RoutingCase, type RoutingExpect } from '../routing/kind.js';
