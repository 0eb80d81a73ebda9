import type { ApplyHook } from '../../../controller/apply/hooks.js';
import type { Plan } from '../../../controller/plan/types.js';
import { FORM_KIND } from '../forms/rows.js';
import type { FileVault } from './files.js';
import type { SubmissionStore } from './store.js';

/** The ids of the forms a plan deletes. */
function deletedForms(plan: Plan): string[] {
  return plan.changes.filter((c) => c.op === 'delete' && c.kind === FORM_KIND).map((c) => c.id);
}

/**
 * The apply hook that takes a form's data with it (forms-api.md §4 DELETE /form: "with its
 * submissions, files and actions"): whichever way a form row is deleted (REST, git, a plan from
 * the cluster stream), its submissions, deliveries and received field names are deleted in the
 * plan's own transaction, and its files after the swap.
 */
export function formDataCleanup(submissions: SubmissionStore, vault: FileVault): ApplyHook {
  return {
    inTransaction(plan) {
      for (const id of deletedForms(plan)) submissions.removeForm(id);
    },
    afterSwap(plan) {
      for (const id of deletedForms(plan)) vault.removeForm(id);
    },
  };
}
