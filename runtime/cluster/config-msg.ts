import type { Plan } from '../../core/plan/types.js';

/** The body of a config-stream message. */
export interface ConfigMsg {
  plan: Plan;
  node: string;
  /** ms timestamp when the plan was applied on its origin node */
  at: number;
  /** fingerprint of the git commit's signer, so every node reports the same provenance (absent for REST plans) */
  signer?: string | null;
  /**
   * present on a canary plan (docs/gitops.md "Canary apply"; its shape is gitops/canary/msg.ts
   * `CanarySpec`, checked by the gate that admits it): applied at once by the canary nodes, held
   * by the others until a decision for its revision follows in the stream
   */
  canary?: unknown;
  /** the git commit's facts (author, committer, message, commit time, trigger) a canary plan carries, recorded with the revision on every node */
  meta?: Record<string, unknown>;
}

/** Shape check of a stream message before it is applied. */
export function isConfigMsg(v: unknown): v is ConfigMsg {
  const m = v as Partial<ConfigMsg> | undefined;
  return typeof m === 'object' && m !== null && typeof m.node === 'string' && typeof m.at === 'number'
    && typeof m.plan === 'object' && m.plan !== null && typeof m.plan.revision === 'string' && m.plan.revision !== ''
    && Array.isArray(m.plan.changes) && typeof m.plan.origin === 'string';
}

/** The JSON of a config-stream message's bytes, or undefined when they are not JSON. */
export function parseConfigJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(data)) as unknown;
  } catch {
    return undefined;
  }
}
