import type { Snapshot } from '../../core/snapshot/snapshot.js';
import { runAtOnce } from '../../core/apply/slicer.js';
import { proposedSnapshotSteps } from '../../core/apply/proposed.js';
import type { Plan } from '../../core/plan/types.js';
import { parseQueryLog } from './query-log.js';
import { replayTraffic, type ReplayEnv, type ReplayReport } from './replay.js';

export { parseQueryLog, type LoggedQuery, type ParsedLog } from './query-log.js';
export { replaySteps, replayTraffic, type ReplayEnv, type ReplayReport, type ReplayGroup } from './replay.js';
export { answersDiffer, isOrdered, type Answered } from './compare.js';
export { renderReplay } from './render.js';

/** The snapshot `plan` would produce from `current`, built at once off to the side (proposedSnapshotSteps); nothing is stored. */
export function proposedSnapshot(current: Snapshot, plan: Plan): Snapshot {
  return runAtOnce(proposedSnapshotSteps(current, plan));
}

/** Replays a query log (its text) against `current` and what `plan` would make of it. */
export function replayPlan(logText: string, current: Snapshot, plan: Plan, env: ReplayEnv): ReplayReport {
  const { queries, skipped } = parseQueryLog(logText);
  return replayTraffic(queries, current, proposedSnapshot(current, plan), env, skipped);
}
