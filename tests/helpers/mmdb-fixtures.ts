import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { asnRecord, buildMmdb, cityRecord } from './mmdb-writer.js';

/** Known places used by the geo tests (lat, lon). */
export const PLACES = { london: [51.5142, -0.0931], newYork: [40.7128, -74.006], tokyo: [35.6895, 139.6917] } as const;

/** Writes a small City database into `dir` and returns its path. Client and endpoint networks included. */
export function writeCityDb(dir: string, name = 'city.mmdb'): string {
  const p = join(dir, name);
  writeFileSync(p, buildMmdb({ databaseType: 'GeoIP2-City', entries: [
    { cidr: '81.2.69.0/24', data: cityRecord(...PLACES.london, 'London') },
    { cidr: '203.0.113.0/24', data: cityRecord(...PLACES.tokyo, 'Tokyo') },
    { cidr: '198.51.100.0/24', data: cityRecord(...PLACES.newYork, 'New York') },
    { cidr: '2001:db8:44::/48', data: cityRecord(...PLACES.tokyo, 'Tokyo') },
    { cidr: '192.0.2.10/32', data: cityRecord(...PLACES.london, 'London') },
    { cidr: '192.0.2.30/32', data: cityRecord(...PLACES.tokyo, 'Tokyo') },
  ] }));
  return p;
}

/** Writes a City database that puts 81.2.69.0/24 in Tokyo instead (to prove a reload took effect). */
export function writeMovedCityDb(path: string): void {
  writeFileSync(path, buildMmdb({ databaseType: 'GeoIP2-City', entries: [
    { cidr: '81.2.69.0/24', data: cityRecord(...PLACES.tokyo, 'Tokyo') },
    { cidr: '192.0.2.10/32', data: cityRecord(...PLACES.london, 'London') },
    { cidr: '192.0.2.30/32', data: cityRecord(...PLACES.tokyo, 'Tokyo') },
  ] }));
}

/** Writes a small ASN database into `dir` and returns its path. */
export function writeAsnDb(dir: string, name = 'asn.mmdb'): string {
  const p = join(dir, name);
  writeFileSync(p, buildMmdb({ databaseType: 'GeoLite2-ASN', entries: [
    { cidr: '100.64.0.0/10', data: asnRecord(64500, 'Example Carrier') },
    { cidr: '100.96.0.0/12', data: asnRecord(64501, 'BIG Telecom Holdings') },
    { cidr: '1.128.0.0/11', data: asnRecord(1221, 'Telstra Pty Ltd') },
  ] }));
  return p;
}
