import type { Core } from '../runtime/app.js';
import { dryRun } from './dry-run.js';
import type { RoutingCase } from './routing/kind.js';
import { planOf, type OffloadWorker } from './offload/offload.js';
import type { Plan } from '../core/plan/types.js';
import { planToJson, renderPlanText } from '../core/plan/render.js';
import type { SourceFile } from './source/git-source.js';
import { validationEnv } from './validate/names.js';

/** Files planned against the running state, nothing applied (POST /gitops/plan and /replay). */
export interface PlannedFiles {
  /** the JSON text of `{valid, problems, plan, text}` (the plan as planToJson, the diff as renderPlanText) */
  json: string;
  valid: boolean;
  /** the plan, when valid and asked for (`wantPlan`) or there are routing test cases */
  plan: Plan | undefined;
  cases: RoutingCase[];
}

/**
 * Load → validate → plan of posted files against the running state, rendered (docs/gitops.md "Off
 * the DNS thread"). With an offload worker (the database is a file) the worker loads, validates,
 * plans, renders and serializes, and this thread pulls the plan's changes in chunks only when the
 * caller needs the Plan (`wantPlan`, or routing test cases to run). When the worker fails, or the
 * state moved on under a plan being pulled, the same is done here, in one turn.
 */
export async function planFiles(core: Core, offload: OffloadWorker | undefined, files: SourceFile[], revision: string | undefined, wantPlan: boolean): Promise<PlannedFiles> {
  if (offload) {
    const done = await offloaded(core, offload, files, revision, wantPlan).catch((err: unknown) => {
      core.log.warn({ err }, 'gitops plan: the offload worker failed; planning on the main thread');
      return undefined;
    });
    if (done) return done;
  }
  const r = dryRun(files, core.holder.current, {
    env: validationEnv(core.config, core.env), safety: core.config.gitops.safety, ...(revision ? { revision } : {}),
  });
  const json = JSON.stringify({ valid: r.valid, problems: r.problems, plan: r.plan ? planToJson(r.plan) : null, text: r.plan ? renderPlanText(r.plan) : '' });
  return { json, valid: r.valid, plan: r.plan, cases: r.cases };
}

async function offloaded(core: Core, offload: OffloadWorker, files: SourceFile[], revision: string | undefined, wantPlan: boolean): Promise<PlannedFiles | undefined> {
  const actual = core.holder.current;
  const job = offload.dryRun({ files, safety: core.config.gitops.safety, baseVersion: actual.version, keepPlan: wantPlan, ...(revision ? { revision } : {}) });
  const { body, planned, cases, summary } = await job.dry.promise;
  if (!summary) return { json: body, valid: planned, plan: undefined, cases };
  let pulled;
  try {
    pulled = await job.changes(summary, (kind, id) => actual.rows.get(kind)?.get(id));
  } finally {
    job.release();
  }
  if (!pulled || core.holder.current !== actual) return undefined;
  return { json: body, valid: true, plan: planOf(summary, pulled.changes, actual.version), cases };
}

/** `json` (an object's JSON text) with one more field at its end. */
export const withField = (json: string, name: string, value: unknown): string => `${json.slice(0, -1)},${JSON.stringify(name)}:${JSON.stringify(value)}}`;
