import { PASS, QUERY_KIND, type DeferredWork, type DnsStep, type QueryScope, type StepResult } from '../dns/port.js';

/**
 * The TXT feature's step of the DNS answer chain (docs/dns.md "The answer chain", "Dynamic
 * updates"): an RFC 2136 UPDATE (opcode 5) is answered once `update` — the replay-checked runner
 * (runtime/dns update-handler.ts) carrying out applyDnsUpdate — settles; every other query passes.
 */
export class DnsUpdateStep implements DnsStep {
  readonly name = 'update';
  readonly kinds = QUERY_KIND.Malformed;

  constructor(private readonly update: DeferredWork) {}

  answer(x: QueryScope): StepResult {
    return x.isUpdate ? x.defer(this.update) : PASS;
  }
}
