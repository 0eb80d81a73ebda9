import type { Candidate, GeoPoint } from './types.js';

const EARTH_KM = 6371.0088;
const RAD = Math.PI / 180;

/** Great-circle distance in km between two points (haversine formula). */
export function greatCircleKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const dLat = (lat2 - lat1) * RAD;
  const dLon = (lon2 - lon1) * RAD;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

/**
 * Geo-ip: candidates ordered by distance to the client, nearest first. Endpoints of unknown
 * location sort last; equal distances fall back to score (highest first), then input order. The
 * caller handles an unknown client (round-robin order). Returns a new array.
 */
export function orderByDistance(cands: readonly Candidate[], client: GeoPoint): Candidate[] {
  const keyed = cands.map((c, i) => ({
    c,
    i,
    d: Number.isNaN(c.lat) || Number.isNaN(c.lon) ? Infinity : greatCircleKm(client.lat, client.lon, c.lat, c.lon),
  }));
  keyed.sort((a, b) => a.d - b.d || b.c.score - a.c.score || a.i - b.i);
  return keyed.map((k) => k.c);
}
