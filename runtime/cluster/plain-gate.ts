import { applyConfigMessage } from './config-apply.js';
import type { ConfigGate } from './config-gate.js';
import { isConfigMsg, type ConfigMsg } from './config-msg.js';
import type { ConfigLedger } from './ledger.js';
import type { Core } from '../app.js';

/** Config sync without an extension: every plan message is applied in stream order; anything else is skipped. */
export function plainGate(deps: { core: Pick<Core, 'applySliced' | 'applyGate' | 'holder'>; ledger: ConfigLedger; timeoutMs: number }): ConfigGate<{ seq: number; msg: ConfigMsg }> {
  return {
    parse: (seq, body) => (isConfigMsg(body) ? { seq, msg: body } : undefined),
    open: () => ({
      admit: ({ seq, msg }) => [{ seq, revision: msg.plan.revision, msg, run: () => applyConfigMessage(deps, seq, msg) }],
      holding: () => undefined,
    }),
  };
}
