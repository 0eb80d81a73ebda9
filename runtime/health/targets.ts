import type { Config } from '../config/types.js';
import { HEALTHCHECK_DEFAULTS } from '../../core/model/normalize.js';
import type { HealthCheckFields, HealthCheckRow, MemberRow } from '../../core/model/types.js';
import { childrenOf, rowsOf, type Snapshot } from '../../core/snapshot/snapshot.js';
import { targetKey, type CheckTarget } from './types.js';
import { STATIC_POOL_ID, staticCheckFields } from '../config/static-pool.js';

const FIELD_NAMES = Object.keys(HEALTHCHECK_DEFAULTS) as (keyof HealthCheckFields)[];

/** The check settings of a row, without identity and ownership fields. */
export function checkFieldsOf(row: HealthCheckFields): HealthCheckFields {
  const out: HealthCheckFields = { ...HEALTHCHECK_DEFAULTS };
  for (const k of FIELD_NAMES) copyField(out, row, k);
  return out;
}

function copyField<T, K extends keyof T>(to: T, from: T, k: K): void {
  to[k] = from[k] ?? to[k];
}

/** A stable identity of check settings: equal settings, equal key. */
export function checkKeyOf(fields: HealthCheckFields): string {
  return JSON.stringify(FIELD_NAMES.map((k) => fields[k]));
}

/**
 * Adds the targets of every pool that has a health check: one per distinct IP among its enabled
 * members (members sharing an IP share a probe, since the probe goes to the check's port and the
 * health view is keyed by IP). Disabled members are not probed (docs/health.md).
 */
export function snapshotTargets(s: Snapshot, out: Map<string, CheckTarget> = new Map()): Map<string, CheckTarget> {
  const steps = snapshotTargetSteps(s, out);
  while (!steps.next().done);
  return out;
}

/**
 * `snapshotTargets` as steps: yields after every 256 health checks, so the targets of a large
 * snapshot can be listed between turns of the event loop (a large apply lists them before its
 * swap). Fills `out`.
 */
export function* snapshotTargetSteps(s: Snapshot, out: Map<string, CheckTarget>): Generator<void, void, void> {
  let n = 0;
  for (const hc of rowsOf<HealthCheckRow>(s, 'healthcheck').values()) {
    if (++n % 256 === 0) yield;
    const check = checkFieldsOf(hc);
    const checkKey = checkKeyOf(check);
    for (const m of childrenOf<MemberRow>(s, hc.poolId, 'member')) {
      if (!m.enabled) continue;
      const key = targetKey(hc.poolId, m.ipAddress);
      if (!out.has(key)) out.set(key, { key, poolId: hc.poolId, ip: m.ipAddress, port: check.port, check, checkKey, checkId: hc.id });
    }
  }
}

/**
 * Adds the file-defined endpoints (`loadbalancer.endpoints`) under the synthetic pool id
 * STATIC_POOL_ID when `health.enabled`; with it false nothing is probed and they count as healthy.
 */
export function staticTargets(config: Config, out: Map<string, CheckTarget> = new Map()): Map<string, CheckTarget> {
  if (!config.health.enabled) return out;
  const check = staticCheckFields(config.health);
  const checkKey = checkKeyOf(check);
  for (const ip of config.loadbalancer.endpoints) {
    const key = targetKey(STATIC_POOL_ID, ip);
    if (!out.has(key)) out.set(key, { key, poolId: STATIC_POOL_ID, ip, port: check.port, check, checkKey, checkId: STATIC_POOL_ID });
  }
  return out;
}

/** Every target the daemon should probe now: the file's endpoints and the snapshot's pools. */
export function desiredTargets(config: Config, s: Snapshot): Map<string, CheckTarget> {
  return snapshotTargets(s, staticTargets(config));
}
