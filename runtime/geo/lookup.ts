import type { AsnResponse, CityResponse } from 'maxmind';
import type { AsnInfo, GeoPoint } from '../balancer/types.js';
import type { MmdbSource } from './mmdb-source.js';

/** Location of an address from a City database, or undefined when absent or without coordinates. */
export function locateIp(src: MmdbSource<CityResponse> | undefined, ip: string): GeoPoint | undefined {
  const r = src?.reader;
  if (!r) return undefined;
  let rec: CityResponse | null;
  try { rec = r.get(ip); } catch { return undefined; }
  const loc = rec?.location;
  if (!loc || typeof loc.latitude !== 'number' || typeof loc.longitude !== 'number') return undefined;
  return { lat: loc.latitude, lon: loc.longitude };
}

/** AS number and organisation of an address from an ASN or ISP database, or undefined. */
export function asnOfIp(src: MmdbSource<AsnResponse> | undefined, ip: string): AsnInfo | undefined {
  const r = src?.reader;
  if (!r) return undefined;
  let rec: AsnResponse | null;
  try { rec = r.get(ip); } catch { return undefined; }
  if (!rec || typeof rec.autonomous_system_number !== 'number') return undefined;
  return { asn: rec.autonomous_system_number, org: rec.autonomous_system_organization ?? '' };
}
