import type { Core } from '../app.js';
import type { Plan } from '../../core/plan/types.js';
import type { Snapshot } from '../../core/snapshot/snapshot.js';

/** Plans and applies through the one write path, returning the new snapshot. */
export function write(core: Core, build: (s: Snapshot, revision: string) => Plan) {
  const plan = build(core.holder.current, core.apiRevision());
  return core.apply(plan);
}
