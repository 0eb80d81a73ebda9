import type { DnssecResponder } from './dnssec-answer.js';
import type { DnsStep } from './step.js';
import { MalformedStep, RefuseStep } from './step-basic.js';
import { ChaosStep } from './step-chaos.js';
import { DnskeyStep } from './step-dnskey.js';
import { ServiceStep, type ServiceStepDeps } from './step-service.js';
import { ZoneStep } from './step-zone.js';
import type { NameIndex } from './zone-index.js';

/** What the chain is built from (AnswerDeps, resolved by the answerer). */
export interface ChainParts extends ServiceStepDeps {
  /** the steps other features add (the TXT feature's RFC 2136 UPDATE), asked first, in order */
  features: readonly DnsStep[];
  /** the zone-transfer step (step-transfer.ts), when transfers are on */
  transfer: DnsStep | undefined;
  /** IXFR over UDP (step-ixfr-udp.ts), when transfers are on */
  udpIxfr: DnsStep | undefined;
  /** `dns.versionName` and the provenance it answers, when the CHAOS version query is on */
  version: { name: string; txt: () => Buffer } | undefined;
  dnssec: DnssecResponder | undefined;
  /** the index lookups read now */
  names: () => NameIndex;
}

/**
 * The answer chain, in order (docs/dns.md "The answer chain"): the features' steps, then
 * malformed (a query the decoder rejected), transfer (AXFR/IXFR over TCP), ixfr-udp (the SOA
 * alone for an IXFR over UDP), chaos (the provenance
 * TXT), refuse (other classes, transfers no step took), zone (finds the zone; REFUSED outside every
 * zone), dnskey (with `dns.dnssec`) and service, which answers every query that reaches it. Built
 * once per answerer; a step that is switched off is left out rather than asked.
 */
export function answerChain(p: ChainParts): readonly DnsStep[] {
  const steps: DnsStep[] = [...p.features, new MalformedStep()];
  if (p.transfer) steps.push(p.transfer);
  if (p.udpIxfr) steps.push(p.udpIxfr);
  if (p.version) steps.push(new ChaosStep(p.version.name, p.version.txt));
  steps.push(new RefuseStep(), new ZoneStep(p.names, p.dnssec));
  if (p.dnssec) steps.push(new DnskeyStep(p.dnssec));
  steps.push(new ServiceStep(p));
  return steps;
}
