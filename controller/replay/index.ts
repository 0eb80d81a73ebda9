import { nextSnapshot, type Snapshot } from '../../runtime/snapshot/snapshot.js';
import { planMutations } from '../apply/apply.js';
import type { Plan } from '../plan/types.js';
import { parseQueryLog } from './query-log.js';
import { replayTraffic, type ReplayEnv, type ReplayReport } from './replay.js';

export { parseQueryLog, type LoggedQuery, type ParsedLog } from './query-log.js';
export { replayTraffic, type ReplayEnv, type ReplayReport, type ReplayGroup } from './replay.js';
export { answersDiffer, isOrdered, type Answered } from './compare.js';
export { renderReplay } from './render.js';

/** The snapshot `plan` would produce from `current`, built off to the side the way the applier does; nothing is stored. */
export function proposedSnapshot(current: Snapshot, plan: Plan): Snapshot {
  return plan.changes.length === 0 ? current : nextSnapshot(current, planMutations(plan), plan.revision, current.builtAt);
}

/** Replays a query log (its text) against `current` and what `plan` would make of it. */
export function replayPlan(logText: string, current: Snapshot, plan: Plan, env: ReplayEnv): ReplayReport {
  const { queries, skipped } = parseQueryLog(logText);
  return replayTraffic(queries, current, proposedSnapshot(current, plan), env, skipped);
}
