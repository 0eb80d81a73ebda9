import type { ApplyOptions } from '../../controller/apply/apply.js';
import type { ApplyHook } from '../../controller/apply/hooks.js';
import type { Plan } from '../../controller/plan/types.js';
import type { ConfigMsg } from './config-msg.js';
import type { ConfigLedger } from './ledger.js';

/**
 * The apply hook that queues every local plan for the config stream (docs/cluster.md "Config
 * sync"): the outbox row is written in the apply's own SQLite transaction, so a node killed right
 * after a local apply still publishes the plan when it comes back, and a plan that apply refuses
 * takes its outbox row with it. Plans from the stream (`fromStream`) and empty plans are not
 * queued; a revision is queued once (INSERT OR IGNORE). `onQueued` runs after the swap of a plan
 * that was queued (the publisher flushes there). Used by the cluster part and by `--create-admin`.
 */
export function outboxHook(ledger: ConfigLedger, node: string, onQueued?: () => void): ApplyHook {
  const queued = (plan: Plan, opts: ApplyOptions) => !opts.fromStream && plan.changes.length > 0;
  return {
    inTransaction(plan, opts) {
      if (!queued(plan, opts)) return;
      const signer = opts.meta?.signer;
      const msg: ConfigMsg = { plan, node, at: Date.now(), ...(typeof signer === 'string' ? { signer } : {}) };
      ledger.enqueue(plan.revision, JSON.stringify(msg), msg.at);
    },
    afterSwap(plan, _next, _prev, opts) {
      if (onQueued && queued(plan, opts)) onQueued();
    },
  };
}
