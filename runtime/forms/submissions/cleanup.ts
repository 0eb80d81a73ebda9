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
  /** files of the deleted forms, removed from the cluster's copy after the swap */
  let gone: string[] = [];
  return {
    inTransaction(plan) {
      gone = []; // a plan whose transaction failed left its list behind: it removed nothing
      for (const id of deleted(plan, FORM_KIND)) gone.push(...submissions.removeForm(id).files.map((f) => f.path));
      for (const id of deleted(plan, ACTION_KIND)) outbox.removeAction(id);
    },
    afterSwap(plan) {
      for (const id of deleted(plan, FORM_KIND)) vault.removeForm(id);
      const rels = gone;
      gone = [];
      // every node applies the deletion and removes them; a removal that fails leaves unreachable objects only
      if (rels.length > 0) void vault.remote?.remove(rels).catch(() => undefined);
    },
  };
}
