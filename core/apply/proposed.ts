import { SnapshotBuilder, type Snapshot } from '../snapshot/snapshot.js';
import type { Plan } from '../plan/types.js';
import { changeMutation } from './apply.js';

/**
 * The snapshot `plan` would produce from `prev`, built off to the side the way the applier does,
 * as steps (a pause every 64 changes): the daemon builds it in slices (runSliced) so a plan of
 * 100,000 services does not stop DNS for its length; the CLI builds it at once (runAtOnce).
 * Nothing is stored; `prev` itself when the plan changes nothing.
 */
export function* proposedSnapshotSteps(prev: Snapshot, plan: Plan, now = prev.builtAt): Generator<void, Snapshot, void> {
  const changes = plan.changes;
  if (changes.length === 0) return prev;
  const b = new SnapshotBuilder(prev);
  for (let i = 0; i < changes.length; i++) {
    b.apply(changeMutation(changes[i]!));
    if ((i & 63) === 63) yield;
  }
  return b.build(plan.revision, now);
}
