/** The manifest loader: parsing into manifests; the kinds they may be are the registry's (gitops/kinds/). */
export { loadManifests, problemAt, type Manifest } from './manifest.js';
export type { ResourceKind, ValidationEnv } from '../kinds/port.js';
// RoutingTest is GitOps's own kind; its cases are read where the loader's callers expect them
export { routingCasesOf, type RoutingCase, type RoutingExpect } from '../routing/kind.js';
