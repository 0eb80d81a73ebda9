import type { GateHold } from './gate.js';

/** How one plan is applied (core/apply/apply.ts `applyPlan`, apply-sliced.ts `applyPlanSliced`). */
export interface ApplyOptions {
  /** apply an unsafe plan anyway (octoDNS `--force`) */
  force?: boolean;
  /**
   * extra data recorded with the revision (signer, author, message…); `planId` is added (computed
   * from the plan unless given: a plan from the config stream keeps its origin's id)
   */
  meta?: Record<string, unknown>;
  /**
   * the plan arrived through the cluster config stream (runtime/cluster/consumer.ts): it is
   * applied like any other, and hooks use the flag not to publish it again
   */
  fromStream?: boolean;
  /**
   * record the revision of an empty plan too (a git commit that changes nothing), so history and
   * ancestry follow the branch: a `revisions` row with zero counts, no snapshot swap, no events
   */
  recordEmpty?: boolean;
  /**
   * extra work for this one apply inside its SQLite transaction, before the plan's rows (e.g. the
   * config-sync ledger row); a throw rolls everything back
   */
  inTransaction?: () => void;
  /**
   * the write gate as the caller holds it (a reconcile takes it when its plan arrives from the
   * offload worker, so no REST write lands between plan and apply): the apply runs under it and
   * leaves it held
   */
  held?: GateHold | undefined;
  /**
   * the plan's id is still being computed elsewhere (a plan made by the offload worker, which
   * hashes it while the apply runs): a sliced apply waits for this once it has written the rows,
   * before the revision record, and `plan.id` is set by then; a rejection rolls the apply back
   * (STORE_FAILED). `applyPlan` (one turn) does not wait for it.
   */
  idReady?: Promise<unknown> | undefined;
  /**
   * the JSON text of each change's `after` (by index in `plan.changes`; undefined for a delete),
   * when the caller has it already (a plan from the offload worker, gitops/offload/plan-wire.ts):
   * a sliced apply stores the rows with it instead of stringifying them again. It must be
   * `JSON.stringify(after)`.
   */
  rowJson?: readonly (string | undefined)[] | undefined;
}
