/**
 * What other features may use of the DNS answer path (docs/architecture.md "Folders and import
 * directions"): the answerer and the query tools GitOps routing tests and replays run a snapshot
 * through, off the DNS thread. Re-exports only; the DNS part owns these modules.
 */
export { Answerer, type PendingAnswer } from './answer.js';
export { buildQueryPacket, QTYPES } from './query-packet.js';
export { rcodeName } from './metrics.js';
export type { GeoDeps } from './service-plan.js';
export { NameMatch, lookupName } from './zone-index.js';
