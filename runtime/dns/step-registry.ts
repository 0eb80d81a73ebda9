import type { Ports } from '../ports/parts.js';
import type { DnsStep } from './step.js';

/** What a feature's step may ask of the DNS part when it is built. */
export interface DnsStepEnv {
  /** true when `zone` (lower-case, fully qualified) is a served zone now */
  servesZone(zone: string): boolean;
}

/** Builds a feature's step of the answer chain, once, when the DNS part sets up. */
export type DnsStepFactory = (env: DnsStepEnv) => DnsStep;

declare module '../ports/parts.js' {
  interface Ports {
    /**
     * The steps features add to the DNS answer chain (addDnsStep), asked first, in the order they
     * were added; read once, when the DNS part sets up.
     */
    dnsSteps?: DnsStepFactory[];
    /** true once the DNS part read `dnsSteps`: a step added later would never be asked */
    dnsStepsTaken?: boolean;
  }
}

/**
 * Adds a feature's step to the DNS answer chain (docs/dns.md "The answer chain"). Called from the
 * feature part's setup, which runs before the DNS part's (runtime/parts-all.ts lists parts in
 * start order); a step added once the chain is built throws rather than being silently left out.
 */
export function addDnsStep(core: { ports: Ports }, make: DnsStepFactory): void {
  if (core.ports.dnsStepsTaken) throw new Error('a DNS answer step was added after the DNS part set up');
  (core.ports.dnsSteps ??= []).push(make);
}

/** The features' steps, built for the DNS part (once). */
export function takeDnsSteps(core: { ports: Ports }, env: DnsStepEnv): DnsStep[] {
  core.ports.dnsStepsTaken = true;
  return (core.ports.dnsSteps ?? []).map((make) => make(env));
}
