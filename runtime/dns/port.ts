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

// What other features may use of the DNS server: the answer chain's step interface and how a
// feature adds a step (docs/dns.md "The answer chain"), and the replay-checked RFC 2136 UPDATE
// runner a step defers an UPDATE to.
export { PASS, QUERY_KIND, type DeferredWork, type DnsStep, type QueryScope, type StepResult, type UpdateSigner } from './step.js';
export { addDnsStep, type DnsStepEnv, type DnsStepFactory } from './step-registry.js';
export { createUpdateHandler, type UpdateApply, type UpdateGrant } from './update-handler.js';
