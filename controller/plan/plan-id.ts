import { createHash } from 'node:crypto';
import { planToJson } from '../render/plan.js';
import type { Plan } from './types.js';

/**
 * The plan id: the first 16 hex digits (64 bits) of the SHA-256 of the plan's stable JSON
 * (controller/render/plan.ts) without `baseVersion`, `counts` and `safety`, i.e. of
 * `{revision, origin, changes}`. Those three say what the plan does; the others depend on the
 * node that computed it (its snapshot version) or follow from the changes. The same plan
 * therefore has the same id on every node that applies it (a cluster peer hashes the plan as it
 * arrived in the config stream), and two plans of one revision that change different rows
 * (after a retry against a moved-on snapshot) have different ids. Secret fields are hashed as
 * the renderings show them (redacted), so the id reveals nothing about them. Pure.
 */
export function planId(plan: Plan): string {
  const j = planToJson(plan);
  const body = JSON.stringify({ revision: j.revision, origin: j.origin, changes: j.changes });
  return createHash('sha256').update(body).digest('hex').slice(0, 16);
}
