/**
 * The offload worker thread (docs/gitops.md "Off the DNS thread"): loads, validates and plans a
 * commit of the config repo away from the thread that answers DNS, and runs the WAL checkpoint
 * after a large commit. It reads the commit's files from the controller's local git cache
 * (isomorphic-git, its own object cache), keeps the parsed YAML by blob id and the last commit's
 * desired rows, and reads the running state from the database on its own connection (db-state.ts).
 * It writes nothing but checkpoints. Requests are handled one at a time, in order.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { readManifestFiles } from '../source/git-source.js';
import { loadManifests } from '../load/index.js';
import { routingCasesOf, type RoutingCase } from '../routing/kind.js';
import { parseCacheKey, type ParseCache } from '../load/manifest.js';
import { checkAgainstActual, sortProblems, validateManifests } from '../validate/validate.js';
import { validationEnv } from '../validate/names.js';
// the thread's composition root: every resource kind (it installs them for the loader and validator)
import { KINDS } from '../../runtime/kinds-all.js';
import { planChanges } from '../../core/plan/plan.js';
import { planIdSteps } from '../../core/plan/plan-id.js';
import type { DesiredRow, Plan } from '../../core/plan/types.js';
import { DbState } from './db-state.js';
import { encodeChanges } from './plan-wire.js';
import type { DryRunRequest, FromOffload, OffloadInit, PlanRequest, ToOffload } from './protocol.js';
import { dryRun } from '../dry-run.js';
import { planToJson, renderPlanText } from '../../core/plan/render.js';

const init = workerData as OffloadInit;
const port = parentPort!;
const db = new Database(init.dbPath, { fileMustExist: true });
db.pragma('busy_timeout = 5000');
const state = new DbState(db);
const env = validationEnv(init.config, init.env as NodeJS.ProcessEnv);
const parseCache: ParseCache = new Map();
/** the last commit that validated: a re-plan of the same head (drift check, retry) skips loading */
let last: { sha: string; desired: DesiredRow[]; cases: RoutingCase[] } | undefined;
/** plans whose changes the main thread is pulling; `handedOver` is called once it has them all (or released the plan) */
const plans = new Map<number, { plan: Plan; handedOver: () => void }>();

const post = (m: FromOffload) => port.postMessage(m);
/** how long a plan id waits for its changes to be handed over before it is hashed anyway */
const HANDOVER_WAIT_MS = 60_000;

/**
 * Keeps plan `id` for the main thread to pull; resolves once it has all its changes or released it,
 * or after HANDOVER_WAIT_MS: a main thread that never says it is done (it always should) does not
 * hold the queue forever.
 */
async function handOver(id: number, plan: Plan): Promise<void> {
  let giveUp: NodeJS.Timeout | undefined;
  await Promise.race([
    new Promise<void>((res) => { plans.set(id, { plan, handedOver: res }); }),
    new Promise<void>((res) => { giveUp = setTimeout(res, HANDOVER_WAIT_MS); }),
  ]);
  clearTimeout(giveUp);
}

/** load → validate → plan, each phase reported as it ends; the first problem ends the request. */
async function plan(id: number, req: PlanRequest): Promise<void> {
  let desired: DesiredRow[];
  let cases: RoutingCase[];
  if (last?.sha === req.sha) {
    ({ desired, cases } = last);
    post({ t: 'loaded', id });
  } else {
    let files;
    try {
      files = await readManifestFiles(req.gitdir, req.sha, req.pathPrefix, (p, oid) => parseCache.has(parseCacheKey(p, oid)));
    } catch (err) {
      return post({ t: 'failed', id, reason: 'FetchFailed', message: `reading the tree of ${req.sha}: ${(err as Error).message}` });
    }
    const loaded = loadManifests(files, parseCache);
    if (loaded.problems.length) {
      const more = validateManifests(loaded.manifests, env, KINDS).problems;
      return post({ t: 'loaded', id, problems: sortProblems([...loaded.problems, ...more]) });
    }
    post({ t: 'loaded', id });
    const v = validateManifests(loaded.manifests, env, KINDS);
    if (v.problems.length) return post({ t: 'validated', id, problems: v.problems });
    desired = v.desired;
    cases = routingCasesOf(loaded.manifests);
    last = { sha: req.sha, desired, cases };
  }
  let t = performance.now();
  const lap = () => { const now = performance.now(); const ms = Math.round(now - t); t = now; return ms; };
  const { seq, snapshot } = state.read();
  const read = lap();
  const clash = checkAgainstActual(desired, snapshot, env, KINDS);
  if (clash.length) return post({ t: 'validated', id, problems: clash });
  post({ t: 'validated', id, cases });
  const check = lap();
  let p: Plan;
  try {
    p = planChanges({ desired, actual: snapshot, revision: req.sha, newId: () => randomUUID(), tenantId: req.tenantId, safety: req.safety });
  } catch (err) {
    return post({ t: 'failed', id, reason: 'ManifestsInvalid', message: (err as Error).message });
  }
  const planned = lap();
  const handedOver = handOver(id, p);
  post({ t: 'planned', id, summary: { revision: p.revision, origin: p.origin, baseSeq: seq, counts: p.counts, safety: p.safety, total: p.changes.length, timings: { read, check, plan: planned } } });
  // The id is hashed once the main thread has the changes (it waits for the id only at the end of
  // its apply), so no hashing delays the chunks it asks for; a step at a time, so that a request
  // (a checkpoint) is answered in between. Only then may the next request run (it re-reads `state`).
  await handedOver;
  const steps = planIdSteps(p);
  for (let r = steps.next(); ; r = steps.next()) {
    if (r.done) { p.id = r.value; break; }
    await new Promise<void>((res) => { setImmediate(res); });
  }
  state.expect(seq, p);
  post({ t: 'planId', id, planId: p.id });
}

/**
 * A dry run of files against the running state (POST /gitops/plan and /replay): the response body
 * is made here, so the main thread neither plans nor renders nor serializes it. When the main
 * thread needs the plan (routing test cases, a replay) it stays until the main thread has pulled
 * its changes or released it.
 */
async function dryRunRequest(id: number, req: DryRunRequest): Promise<void> {
  const t = performance.now();
  const { seq, snapshot } = state.read();
  const read = Math.round(performance.now() - t);
  const r = dryRun(req.files, snapshot, { env, kinds: KINDS, safety: req.safety, ...(req.revision ? { revision: req.revision } : {}) });
  const p = r.plan;
  if (p) p.baseVersion = req.baseVersion;
  const body = JSON.stringify({ valid: r.valid, problems: r.problems, plan: p ? planToJson(p) : null, text: p ? renderPlanText(p) : '' });
  if (!p || (r.cases.length === 0 && !req.keepPlan)) return post({ t: 'dry-run', id, body, planned: p !== undefined, cases: r.cases });
  const handedOver = handOver(id, p);
  const summary = { revision: p.revision, origin: p.origin, baseSeq: seq, counts: p.counts, safety: p.safety, total: p.changes.length, timings: { read, check: 0, plan: 0 } };
  post({ t: 'dry-run', id, body, planned: true, cases: r.cases, summary });
  await handedOver;
  plans.delete(id);
}

let queue: Promise<void> = Promise.resolve();
port.on('message', (m: ToOffload) => {
  switch (m.t) {
    case 'plan':
      queue = queue.then(() => plan(m.id, m)).catch((err: unknown) => {
        post({ t: 'failed', id: m.id, reason: 'Internal', message: (err as Error).message ?? String(err) });
      });
      break;
    case 'dry-run':
      queue = queue.then(() => dryRunRequest(m.id, m)).catch((err: unknown) => {
        post({ t: 'failed', id: m.id, reason: 'Internal', message: (err as Error).message ?? String(err) });
      });
      break;
    case 'chunk': {
      const p = plans.get(m.id);
      post({ t: 'chunk', id: m.id, from: m.from, chunk: p ? encodeChanges(p.plan.changes, m.from, m.from + m.count) : { changes: '[]', rows: '', ends: new Uint32Array(0) } });
      if (p && m.from + m.count >= p.plan.changes.length) p.handedOver();
      break;
    }
    case 'release':
      plans.get(m.id)?.handedOver();
      plans.delete(m.id);
      break;
    case 'checkpoint':
      try {
        db.pragma('wal_checkpoint(PASSIVE)');
        post({ t: 'checkpointed', id: m.id });
      } catch (err) {
        post({ t: 'checkpointed', id: m.id, error: (err as Error).message });
      }
      break;
  }
});
