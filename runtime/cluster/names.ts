/**
 * NATS names used by the cluster part (DESIGN "Names the spec fixes": `SVC_SESSIONS`, `SVC.cfg`,
 * `svc.cfg`, `SVC_CFG`; the others are this part's choice, documented in docs/cluster.md).
 */
import type { Config } from '../config/types.js';

/**
 * Escapes a value into one NATS subject token / KV key token: `[A-Za-z0-9_-]` stay, every other
 * byte becomes `=` and two hex digits. Reversible with `decodeToken`; never returns an empty token.
 */
export function encodeToken(value: string): string {
  if (value === '') return '=';
  let out = '';
  for (const b of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9_-]/.test(c) ? c : `=${b.toString(16).padStart(2, '0')}`;
  }
  return out;
}

/** Reverses `encodeToken`. */
export function decodeToken(token: string): string {
  if (token === '=') return '';
  const bytes: number[] = [];
  for (let i = 0; i < token.length; i++) {
    if (token[i] === '=') { bytes.push(parseInt(token.slice(i + 1, i + 3), 16)); i += 2; } else bytes.push(token.charCodeAt(i));
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * JetStream stream names may not contain `.`, `*`, `>` or whitespace, so the configured
 * `state.config.stream` (default `SVC.cfg`) maps those characters to `_` (`SVC_cfg`).
 */
export function streamName(configured: string): string {
  return configured.replace(/[.*>\s/\\]/g, '_');
}

/** Every name the cluster part uses, derived from the config once. */
export interface ClusterNames {
  cluster: string;
  node: string;
  /** encoded cluster id, one token */
  clusterToken: string;
  nodeToken: string;
  healthSubject: string;
  heartbeatSubject: string;
  configStream: string;
  configSubject: string;
  configBucket: string;
  /** object store of plans too large for one stream message (docs/cluster.md "Large plans") */
  plansBucket: string;
  leaseBucket: string;
  healthBucket: string;
  sessionsBucket: string;
  noncesBucket: string;
}

/** Derives the names from the config. */
export function clusterNames(config: Config): ClusterNames {
  const clusterToken = encodeToken(config.cluster.id);
  const c = config.state.config;
  return {
    cluster: config.cluster.id,
    node: config.node.id,
    clusterToken,
    nodeToken: encodeToken(config.node.id),
    healthSubject: `svc.health.${clusterToken}`,
    heartbeatSubject: `svc.hb.${clusterToken}`,
    configStream: streamName(c.stream),
    configSubject: `${c.subjectPrefix}.${clusterToken}`,
    configBucket: c.kvBucket,
    plansBucket: `${c.kvBucket}_PLANS`,
    leaseBucket: `${c.kvBucket}_LEASE`,
    healthBucket: 'SVC_HEALTH',
    sessionsBucket: 'SVC_SESSIONS',
    noncesBucket: 'SVC_NONCES',
  };
}

/** KV key of one node's health entry: `<cluster>.<node>.<pool>.<ip>`, each token encoded. */
export function healthKey(n: ClusterNames, node: string, poolId: string, ip: string): string {
  return `${n.clusterToken}.${encodeToken(node)}.${encodeToken(poolId)}.${encodeToken(ip)}`;
}

/** Parses a health key back to node, pool and IP; undefined for a key of another shape. */
export function parseHealthKey(key: string): { cluster: string; node: string; poolId: string; ip: string } | undefined {
  const t = key.split('.');
  if (t.length !== 4) return undefined;
  return { cluster: decodeToken(t[0]!), node: decodeToken(t[1]!), poolId: decodeToken(t[2]!), ip: decodeToken(t[3]!) };
}
