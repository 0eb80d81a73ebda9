import type { Plan } from '../../controller/plan/types.js';

/** The body of a config-stream message. */
export interface ConfigMsg {
  plan: Plan;
  node: string;
  /** ms timestamp when the plan was applied on its origin node */
  at: number;
  /** fingerprint of the git commit's signer, so every node reports the same provenance (absent for REST plans) */
  signer?: string | null;
}

/** Shape check of a stream message before it is applied. */
export function isConfigMsg(v: unknown): v is ConfigMsg {
  const m = v as Partial<ConfigMsg> | undefined;
  return typeof m === 'object' && m !== null && typeof m.node === 'string' && typeof m.at === 'number'
    && typeof m.plan === 'object' && m.plan !== null && typeof m.plan.revision === 'string' && m.plan.revision !== ''
    && Array.isArray(m.plan.changes) && typeof m.plan.origin === 'string';
}

/**
 * Parses a stream message's bytes. Returns undefined for anything that is not a plan message
 * (bad JSON, wrong shape): no node can apply it, so every node skips it alike.
 */
export function parseConfigMsg(data: Uint8Array): ConfigMsg | undefined {
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(data));
  } catch {
    return undefined;
  }
  return isConfigMsg(body) ? body : undefined;
}
