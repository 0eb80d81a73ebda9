import type { Core } from '../app.js';
import type { Plan } from '../../core/plan/types.js';
import type { Snapshot } from '../../core/snapshot/snapshot.js';
import { writeUnique } from '../ports/unique-names.js';

/** Plans and applies through the one write path, returning the new snapshot. */
export function write(core: Core, build: (s: Snapshot, revision: string) => Plan) {
  const plan = build(core.holder.current, core.apiRevision());
  return core.apply(plan);
}

/**
 * As {@link write}, for a write that may take a unique name (a pool's name, a service's domain):
 * the name is checked locally and, in a cluster, reserved first (docs/cluster.md "Unique names").
 */
export function writeReserved(core: Core, build: (s: Snapshot, revision: string) => Plan): Promise<Snapshot> {
  return writeUnique(core, build);
}
