import { createHash } from 'node:crypto';
import { changeJsonText } from './render.js';
import type { Plan } from './types.js';

/**
 * The plan id: the first 16 hex digits (64 bits) of the SHA-256 of the plan's stable JSON
 * (core/plan/render.ts) without `baseVersion`, `counts` and `safety`, i.e. of
 * `{revision, origin, changes}`. Those three say what the plan does; the others depend on the
 * node that computed it (its snapshot version) or follow from the changes. The same plan
 * therefore has the same id on every node that applies it (a cluster peer hashes the plan as it
 * arrived in the config stream), and two plans of one revision that change different rows
 * (after a retry against a moved-on snapshot) have different ids. Secret fields are hashed as
 * the renderings show them (redacted), so the id reveals nothing about them. Pure.
 */
export function planId(plan: Plan): string {
  const steps = planIdSteps(plan);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** Changes hashed between two yields of `planIdSteps`. */
const CHANGES_PER_STEP = 2000;

/**
 * `planId` as steps: yields after every CHANGES_PER_STEP changes and returns the id, so a large
 * plan's id can be computed between other work (the offload worker answers the main thread's
 * requests for the plan's changes meanwhile). It hashes `JSON.stringify({revision, origin,
 * changes: planToJson(plan).changes})` fed a step's changes at a time (`changeJsonText`): the same
 * bytes, without the whole rendering (150 MB for 160,000 rows) in memory.
 */
export function* planIdSteps(plan: Plan): Generator<void, string, void> {
  const h = createHash('sha256');
  h.update(`{"revision":${JSON.stringify(plan.revision)},"origin":${JSON.stringify(plan.origin)},"changes":[`);
  const changes = plan.changes;
  for (let from = 0; from < changes.length; from += CHANGES_PER_STEP) {
    if (from > 0) yield;
    const to = Math.min(changes.length, from + CHANGES_PER_STEP);
    const texts: string[] = [];
    for (let i = from; i < to; i++) texts.push(changeJsonText(changes[i]!));
    h.update(from === 0 ? texts.join(',') : `,${texts.join(',')}`);
  }
  h.update(']}');
  return h.digest('hex').slice(0, 16);
}
