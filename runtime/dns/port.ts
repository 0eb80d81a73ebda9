// What other features may use of the DNS server: the answer chain's step interface and how a
// feature adds a step (docs/dns.md "The answer chain"), and the replay-checked RFC 2136 UPDATE
// runner a step defers an UPDATE to.
export { PASS, QUERY_KIND, type DeferredWork, type DnsStep, type QueryScope, type StepResult, type UpdateSigner } from './step.js';
export { addDnsStep, type DnsStepEnv, type DnsStepFactory } from './step-registry.js';
export { createUpdateHandler, type UpdateApply, type UpdateGrant } from './update-handler.js';
