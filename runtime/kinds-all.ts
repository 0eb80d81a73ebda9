/**
 * Every resource kind of the config repo, in the order of docs/gitops.md "Resource kinds", and
 * the process's registry made of them (installed on import, like parts-all.ts registers parts).
 * A composition root: the one place that names every feature's kind.
 */
import { KindRegistry, installKinds } from '../gitops/kinds/registry.js';
import { poolKind, serviceKind } from './resources/kind.js';
import { txtRecordKind } from './txt/kind.js';
import { redirectKind } from './redirect/kind.js';
import { formKind, apiKeyKind } from './forms/kind.js';
import { alertTargetKind } from './alerts/kind.js';
import { routingTestKind } from '../gitops/routing/kind.js';

export { registerManifestKind } from '../gitops/kinds/registry.js';

/** The built-in kinds; the order is the order name claims are read from the running state. */
export const KINDS = new KindRegistry([poolKind, serviceKind, redirectKind, formKind, apiKeyKind, txtRecordKind, alertTargetKind, routingTestKind]);

installKinds(KINDS);
