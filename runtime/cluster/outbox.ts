import type { ApplyOptions } from '../../controller/apply/apply.js';
import type { ApplyHook } from '../../controller/apply/hooks.js';
import type { Plan } from '../../controller/plan/types.js';
import type { ConfigMsg } from './config-msg.js';
import type { ConfigLedger } from './ledger.js';
import { runSliced } from '../slicer.js';

/**
 * The apply hook that queues every local plan for the config stream (docs/cluster.md "Config
 * sync"): the outbox row is written in the apply's own SQLite transaction, so a node killed right
 * after a local apply still publishes the plan when it comes back, and a plan that apply refuses
 * takes its outbox row with it. Plans from the stream (`fromStream`) and empty plans are not
 * queued; a revision is queued once (INSERT OR IGNORE). In a sliced apply the JSON of the plan's
 * changes is made in `prepare`, in slices (a 100,000-service import is tens of megabytes of it);
 * the rest of the message, with the plan's id (a plan from the offload worker gets it only during
 * the apply: ApplyOptions.idReady), is made and the row written in the transaction. `onQueued` runs after the swap of a plan that was queued (the publisher
 * flushes there). Used by the cluster part and by `--create-admin`.
 */
export function outboxHook(ledger: ConfigLedger, node: string, onQueued?: () => void): ApplyHook {
  const queued = (plan: Plan, opts: ApplyOptions) => !opts.fromStream && plan.changes.length > 0;
  const messageOf = (plan: Plan, opts: ApplyOptions): ConfigMsg => {
    const signer = opts.meta?.signer;
    return { plan, node, at: Date.now(), ...(typeof signer === 'string' ? { signer } : {}) };
  };
  /** the JSON of the changes made by `prepare` for the plan being applied */
  let made: { plan: Plan; changes: string } | undefined;
  return {
    async prepare(plan, _next, _prev, slicer, opts) {
      made = undefined;
      if (!queued(plan, opts)) return;
      made = { plan, changes: await runSliced(changesJsonSteps(plan.changes), slicer) };
    },
    inTransaction(plan, opts) {
      const ready = made?.plan === plan ? made : undefined;
      made = undefined;
      if (!queued(plan, opts)) return;
      const msg = messageOf(plan, opts);
      ledger.enqueue(plan.revision, ready ? configMsgJson(msg, ready.changes) : JSON.stringify(msg), msg.at);
    },
    afterSwap(plan, _next, _prev, opts) {
      if (onQueued && queued(plan, opts)) onQueued();
    },
  };
}

/** Changes stringified between two yields of `configMsgJsonSteps`. */
const CHANGES_PER_STEP = 500;
/** stands in for the change list while the rest of the message is stringified */
const CHANGES_MARK = '\u0000changes\u0000';

/** The JSON text of a change list (`JSON.stringify(changes)`) as steps: a few hundred changes between yields. Pure. */
export function* changesJsonSteps(changes: Plan['changes']): Generator<void, string, void> {
  const parts: string[] = [];
  for (let i = 0; i < changes.length; i += CHANGES_PER_STEP) {
    if (i > 0) yield;
    const json = JSON.stringify(changes.slice(i, i + CHANGES_PER_STEP));
    parts.push(json.slice(1, -1));
  }
  return `[${parts.join(',')}]`;
}

/** `JSON.stringify(msg)`, with the text of its plan's changes made before (`changesJsonSteps`). Pure. */
export function configMsgJson(msg: ConfigMsg, changesJson: string): string {
  const frame = JSON.stringify({ ...msg, plan: { ...msg.plan, changes: CHANGES_MARK } });
  const mark = JSON.stringify(CHANGES_MARK);
  const at = frame.indexOf(mark);
  return `${frame.slice(0, at)}${changesJson}${frame.slice(at + mark.length)}`;
}

/**
 * `JSON.stringify(msg)` as steps: the same text, with the plan's changes stringified a few hundred
 * at a time between yields. Pure.
 */
export function* configMsgJsonSteps(msg: ConfigMsg): Generator<void, string, void> {
  return configMsgJson(msg, yield* changesJsonSteps(msg.plan.changes));
}
