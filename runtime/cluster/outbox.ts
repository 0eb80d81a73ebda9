import type { ApplyOptions } from '../../core/apply/apply.js';
import type { ApplyHook } from '../../core/apply/hooks.js';
import type { Plan } from '../../core/plan/types.js';
import type { ConfigMsg } from './config-msg.js';
import type { ConfigLedger } from './ledger.js';
import { runSliced } from '../../core/apply/slicer.js';

/**
 * The apply hook that queues every local plan for the config stream (docs/cluster.md "Config
 * sync"): the outbox row is written in the apply's own SQLite transaction, so a node killed right
 * after a local apply still publishes the plan when it comes back, and a plan that apply refuses
 * takes its outbox row with it. Plans from the stream (`fromStream`) and empty plans are not
 * queued; a revision is queued once. In a sliced apply the JSON of the plan's changes is made in
 * `prepare`, in slices (a 100,000-service import is tens of megabytes of it); the rest of the
 * message, with the plan's id (a plan from the offload worker gets it only during the apply:
 * ApplyOptions.idReady), is added in the transaction, where the row is written in parts of a few
 * hundred changes, in slices too (`inTransactionSliced`). A one-turn apply writes it whole.
 * `onQueued` runs after the swap of a plan that was queued (the publisher flushes there). Used by
 * the cluster part and by `--create-admin`.
 */
export function outboxHook(ledger: ConfigLedger, node: string, onQueued?: () => void): ApplyHook {
  const queued = (plan: Plan, opts: ApplyOptions) => !opts.fromStream && plan.changes.length > 0;
  const messageOf = (plan: Plan, opts: ApplyOptions): ConfigMsg => {
    const signer = opts.meta?.signer;
    return { plan, node, at: Date.now(), ...(typeof signer === 'string' ? { signer } : {}) };
  };
  /** the JSON of the changes made by `prepare` for the plan being applied, in fragments */
  let made: { plan: Plan; fragments: string[] } | undefined;
  /** the plan whose row `inTransactionSliced` wrote */
  let written: Plan | undefined;
  return {
    async prepare(plan, _next, _prev, slicer, opts) {
      made = undefined;
      written = undefined;
      if (!queued(plan, opts)) return;
      made = { plan, fragments: await runSliced(changeFragmentsSteps(plan.changes), slicer) };
    },
    async inTransactionSliced(plan, opts, slicer) {
      const ready = made?.plan === plan ? made : undefined;
      made = undefined;
      if (!ready || !queued(plan, opts)) return;
      const msg = messageOf(plan, opts);
      await runSliced(ledger.enqueueSteps(plan.revision, configMsgParts(msg, ready.fragments), msg.at), slicer);
      written = plan;
    },
    inTransaction(plan, opts) {
      made = undefined;
      if (written === plan) { written = undefined; return; }
      if (!queued(plan, opts)) return;
      const msg = messageOf(plan, opts);
      ledger.enqueue(plan.revision, JSON.stringify(msg), msg.at);
    },
    afterSwap(plan, _next, _prev, opts) {
      if (onQueued && queued(plan, opts)) onQueued();
    },
  };
}

/** Changes per fragment of `changeFragmentsSteps` (a yield between two). */
const CHANGES_PER_STEP = 500;
/** stands in for the change list while the rest of the message is stringified */
const CHANGES_MARK = '\u0000changes\u0000';

/**
 * The JSON of a change list in fragments, as steps: each fragment is a few hundred changes'
 * JSON, comma-separated, without the brackets (`[${fragments.join(',')}]` is
 * `JSON.stringify(changes)`), with a yield between fragments. Pure.
 */
export function* changeFragmentsSteps(changes: Plan['changes']): Generator<void, string[], void> {
  const fragments: string[] = [];
  for (let i = 0; i < changes.length; i += CHANGES_PER_STEP) {
    if (i > 0) yield;
    fragments.push(JSON.stringify(changes.slice(i, i + CHANGES_PER_STEP)).slice(1, -1));
  }
  return fragments;
}

/**
 * `JSON.stringify(msg)` in parts (their concatenation), from the fragments of its plan's changes
 * made before (`changeFragmentsSteps`): the message up to its change list and the first fragment,
 * each further fragment, and the rest of the message. Pure.
 */
export function configMsgParts(msg: ConfigMsg, fragments: readonly string[]): string[] {
  const frame = JSON.stringify({ ...msg, plan: { ...msg.plan, changes: CHANGES_MARK } });
  const mark = JSON.stringify(CHANGES_MARK);
  const at = frame.indexOf(mark);
  const head = `${frame.slice(0, at)}[`;
  const tail = `]${frame.slice(at + mark.length)}`;
  if (fragments.length === 0) return [head + tail];
  const parts = fragments.map((f, i) => (i === 0 ? head + f : `,${f}`));
  parts[parts.length - 1] += tail;
  return parts;
}

/**
 * `JSON.stringify(msg)` as steps: the same text, with the plan's changes stringified a few hundred
 * at a time between yields. Pure.
 */
export function* configMsgJsonSteps(msg: ConfigMsg): Generator<void, string, void> {
  return configMsgParts(msg, yield* changeFragmentsSteps(msg.plan.changes)).join('');
}
