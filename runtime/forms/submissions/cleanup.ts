import type { ApplyHook } from '../../../core/apply/hooks.js';
import type { Plan } from '../../../core/plan/types.js';
import { ACTION_KIND, FORM_KIND } from '../forms/rows.js';
import type { Outbox } from '../deliveries/outbox.js';
import type { FileVault } from './files.js';
import type { SubmissionStore } from './store.js';

/** The ids of the rows of a kind a plan deletes. */
function deleted(plan: Plan, kind: string): string[] {
  return plan.changes.filter((c) => c.op === 'delete' && c.kind === kind).map((c) => c.id);
}

/**
 * The apply hook that takes a form's data with it (forms-api.md §4 DELETE /form: "with its
 * submissions, files and actions"): whichever way a form row is deleted (REST, git, a plan from
 * the cluster stream), its submissions, deliveries and received field names are deleted in the
 * plan's own transaction, and its files after the swap. A deleted action takes its deliveries.
 */
export function formDataCleanup(submissions: SubmissionStore, vault: FileVault, outbox: Outbox): ApplyHook {
  return {
    inTransaction(plan) {
      for (const id of deleted(plan, FORM_KIND)) submissions.removeForm(id);
      for (const id of deleted(plan, ACTION_KIND)) outbox.removeAction(id);
    },
    afterSwap(plan) {
      for (const id of deleted(plan, FORM_KIND)) vault.removeForm(id);
    },
  };
}
