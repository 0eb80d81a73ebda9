import type { MemberRow, ServiceRow } from '../../core/model/types.js';
import { childrenOf, type Snapshot } from '../../core/snapshot/snapshot.js';
import { toFqdn } from '../tenancy/names.js';

/** The ingest limits (gslb-api.md §8 "RUM latency sample", "RUM request body"). */
export const RUM_MAX_BODY_BYTES = 8 * 1024;
export const RUM_MAX_SAMPLES = 32;
export const RUM_MAX_LATENCY_MS = 60_000;

/** One measurement target of a service: a member address and its rumUrl. */
export interface RumTarget { ip: string; url: string }

/** A beacon: the service measured and the samples, one per member address. */
export interface IngestBody { domain: string; samples: { ip: string; ms: number }[] }

/** Why a sample was not taken. */
export type SampleRefusal = 'NotInPool' | 'NoRumUrl' | 'LatencyOutOfRange' | 'Duplicate';

/** The samples taken and those refused, with their place in the body. */
export interface Judged {
  accepted: { ip: string; ms: number }[];
  rejected: { index: number; ip: string; reason: SampleRefusal }[];
}

/** The service a domain names (lower-cased, trailing dot optional), or undefined. */
export function serviceOf(s: Snapshot, domain: string): ServiceRow | undefined {
  return s.serviceByDomain.get(toFqdn(domain));
}

/**
 * The measurement targets of a service: its pool's enabled members with a rumUrl, in pool order
 * (members without one are never measured, gslb-api.md §2). Pure.
 */
export function rumTargets(s: Snapshot, svc: ServiceRow): RumTarget[] {
  if (!svc.poolId) return [];
  const out: RumTarget[] = [];
  for (const m of childrenOf<MemberRow>(s, svc.poolId, 'member')) if (m.enabled && m.rumUrl) out.push({ ip: m.ipAddress, url: m.rumUrl });
  return out;
}

/**
 * Sorts a beacon's samples (gslb-api.md §7, §8): a sample counts only for an address of the
 * service's pool that has a rumUrl, with a latency above 0 and at most 60,000 ms, once per address
 * (the first). Pure.
 */
export function judgeSamples(s: Snapshot, svc: ServiceRow, samples: IngestBody['samples']): Judged {
  const members = svc.poolId ? childrenOf<MemberRow>(s, svc.poolId, 'member') : [];
  const out: Judged = { accepted: [], rejected: [] };
  const seen = new Set<string>();
  samples.forEach(({ ip, ms }, index) => {
    const m = members.find((x) => x.ipAddress === ip);
    const reason: SampleRefusal | undefined = !m ? 'NotInPool' : !m.rumUrl ? 'NoRumUrl'
      : !(ms > 0 && ms <= RUM_MAX_LATENCY_MS) ? 'LatencyOutOfRange' : seen.has(ip) ? 'Duplicate' : undefined;
    if (reason) out.rejected.push({ index, ip, reason });
    else { seen.add(ip); out.accepted.push({ ip, ms }); }
  });
  return out;
}
