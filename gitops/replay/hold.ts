import { readFile, stat } from 'node:fs/promises';
import type { Core } from '../../runtime/app.js';
import type { Logger } from '../../runtime/log/logger.js';
import { stalled } from '../errors.js';
import type { Plan } from '../../core/plan/types.js';
import { parseQueryLogSteps, type ParsedLog } from './query-log.js';
import { proposedSnapshotSteps } from '../../core/apply/proposed.js';
import { runSliced, Slicer } from '../../core/apply/slicer.js';
import { replaySteps, type ReplayReport } from './replay.js';
import { daemonReplayEnv } from './daemon-env.js';

/** The parsed sample per core, kept while the file's size and mtime stay the same. */
const samples = new WeakMap<Core, { stamp: string; parsed: ParsedLog }>();

/** The parsed `gitops.replayLog`, read again only when the file changed; undefined (logged) when it cannot be read. */
async function sampleOf(core: Core, file: string, log: Logger, slicer: Slicer): Promise<ParsedLog | undefined> {
  try {
    const st = await stat(file);
    const stamp = `${st.size}:${st.mtimeMs}:${st.ino}`;
    const cached = samples.get(core);
    if (cached?.stamp === stamp) return cached.parsed;
    // read off the thread (libuv's pool) and parsed in slices: a large sample does not stop DNS
    const parsed = await runSliced(parseQueryLogSteps(await readFile(file, 'utf8')), slicer);
    samples.set(core, { stamp, parsed });
    return parsed;
  } catch (err) {
    log.warn({ file, detail: (err as Error).message }, 'traffic replay skipped: gitops.replayLog cannot be read');
    return undefined;
  }
}

/**
 * Replays `sample` against the running state and what `plan` would make of it, with this node's
 * health and geo databases: the proposed state, both zone indexes and the replay in ~10 ms slices,
 * so a large plan or sample does not stop DNS.
 */
export async function replaySliced(core: Core, sample: ParsedLog, plan: Plan, slicer = new Slicer()): Promise<ReplayReport> {
  const current = core.holder.current;
  const proposed = await runSliced(proposedSnapshotSteps(current, plan), slicer);
  return runSliced(replaySteps(sample.queries, current, proposed, daemonReplayEnv(core), sample.skipped), slicer);
}

/**
 * The traffic safety of a plan (docs/gitops.md "Traffic replay"): with `gitops.replayLog` and
 * `gitops.maxChangedTraffic` set, replays the sample against the running state and the plan's
 * result with this node's health and geo databases, logs the share of answers that change, and
 * holds the plan back when it is above the limit, unless forced, like the safety thresholds.
 * Without both keys, for an empty plan or when forced, does nothing. A sample that cannot be read
 * is logged and skipped (the structural thresholds still apply). The proposed state, both zone
 * indexes and the replay are built in ~10 ms slices, so a large plan or sample does not stop DNS.
 * Errors: stalled TooMuchTrafficChanged.
 */
export async function holdTrafficChange(core: Core, plan: Plan, force: boolean | undefined, log: Logger): Promise<void> {
  const { replayLog, maxChangedTraffic } = core.config.gitops;
  if (!replayLog || maxChangedTraffic === undefined || plan.changes.length === 0 || force) return;
  const slicer = new Slicer();
  const sample = await sampleOf(core, replayLog, log, slicer);
  if (!sample || sample.queries.length === 0) return;
  const r = await replaySliced(core, sample, plan, slicer);
  log.info({ queries: r.queries, changed: r.changed, percent: r.percent, limit: maxChangedTraffic }, `traffic replay: ${r.percent} % of answers change`);
  if (r.percent > maxChangedTraffic) {
    const top = r.byService.filter((g) => g.changed > 0).slice(0, 3).map((g) => `${g.key}: ${g.changed} of ${g.queries}`).join('; ');
    throw stalled('TooMuchTrafficChanged', `plan changes the answers of ${r.changed} of ${r.queries} sampled queries (${r.percent.toFixed(2)} %, limit ${maxChangedTraffic} %${top ? `; ${top}` : ''}); apply with force to proceed`);
  }
}
