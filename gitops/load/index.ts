/** The manifest loader: parsing, the kind registry and the built-in kinds. */
import './pool.js';
import './service.js';
import './redirect.js';
import './form.js';
import './apikey.js';
import './txtrecord.js';
import './alerttarget.js';
import './routingtest.js';
export { loadManifests, problemAt, type Manifest } from './manifest.js';
export { registerManifestKind, manifestKind, manifestKindNames, type ManifestKind, type ValidationEnv } from './kinds.js';
export { poolKeys } from './pool.js';
export { formKeys } from './form.js';
export { routingCasesOf, type RoutingCase, type RoutingExpect } from './routingtest.js';
