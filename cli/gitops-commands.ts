import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { AsnResponse, CityResponse } from 'maxmind';
import { pino } from 'pino';
import { loadConfig, validateConfigObject } from '../runtime/config/load.js';
import { MmdbSource } from '../runtime/geo/mmdb-source.js';
import { HealthView } from '../runtime/ports/health-view.js';
import type { Plan } from '../core/plan/types.js';
import { renderReplay, replayPlan, type ReplayReport } from '../gitops/replay/index.js';
import type { Config } from '../runtime/config/types.js';
import { describeResult, runRoutingCasesForPlan, type RoutingRun } from '../gitops/routing/run.js';
import { ValidationError } from '../runtime/errors.js';
import { ResourceStore } from '../core/store/resources.js';
import { emptySnapshot, nextSnapshot, type Snapshot } from '../core/snapshot/snapshot.js';
import { dryRun } from '../gitops/dry-run.js';
import { validationEnv } from '../gitops/validate/names.js';
import type { ValidationEnv } from '../runtime/ports/kinds.js';
import { KINDS } from '../runtime/kinds-all.js';
import type { SafetyOptions } from '../core/plan/safety.js';
import { planToJson, renderPlanText } from '../core/plan/render.js';
import type { GitOpsStatus, HistoryEntry, Attempt } from '../gitops/status.js';
import type { RollbackStatus } from '../gitops/rollback/state.js';
import { ApiClient } from './client.js';
import { COMMANDS, output } from './commands.js';
import { colorDiff, duration, isTty, progress, table, when } from './format.js';
import { readManifestDir } from './manifest-dir.js';
import { EXIT, inputError } from './exit-codes.js';
import { countProblems, locateProblems } from './problem-output.js';
import { formatProblem } from '../runtime/config/problem.js';
import { renderCanary } from './canary-format.js';
import type { CanaryStatus } from '../gitops/canary/port.js';

type Flags = Record<string, string | boolean>;
const str = (f: Flags, k: string) => (typeof f[k] === 'string' ? (f[k] as string) : undefined);

/**
 * Validation env and safety from `--config FILE` when given (unknown otherwise: db checks skipped),
 * and the config routing tests answer with (the defaults without a file). Errors: exit 2
 * (CliError) when the file cannot be read or is not a valid configuration.
 */
export function fromConfig(flags: Flags): { env: ValidationEnv; safety?: SafetyOptions; config: Config } {
  const file = str(flags, 'config');
  if (!file) return { env: {}, config: validateConfigObject({}) };
  let c;
  try {
    c = loadConfig(file);
  } catch (err) {
    throw inputError(`--config ${file}: ${err instanceof ValidationError ? err.problems.join('; ') : (err as Error).message}`);
  }
  return { env: validationEnv(c), safety: c.gitops.safety, config: c };
}

/** The manifest files under `dir`. Errors: exit 2 (CliError) when `dir` is missing or not a readable directory. */
export function readDir(flags: Flags, dir: string | undefined) {
  if (!dir) throw inputError('a manifest directory is required');
  progress(flags, `reading manifests under ${dir}`);
  let files;
  try {
    files = readManifestDir(dir);
  } catch (err) {
    throw inputError((err as Error).message);
  }
  progress(flags, `read ${files.length} file(s)`);
  return files;
}

/** Rows of a gslbd database file, opened read-only (the daemon may be running). */
function snapshotFromDb(file: string): Snapshot {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const rows = new ResourceStore(db).loadAll();
    return nextSnapshot(emptySnapshot(), rows.map((row) => ({ op: 'put', row })), '', 0);
  } finally {
    db.close();
  }
}

interface RemotePlan { valid: boolean; problems: string[]; plan: Record<string, unknown> | null; text: string; replay?: ReplayReport | null; routingTests?: RoutingRun | null }

/**
 * Plans DIR against --db FILE (offline) or a daemon's API; with `log` (a query log's text) also
 * replays it against the current and the planned state (docs/gitops.md "Traffic replay").
 */
async function planDir(flags: Flags, dir: string | undefined, log?: string): Promise<RemotePlan> {
  const files = readDir(flags, dir);
  const db = str(flags, 'db');
  if (db) {
    const { env, safety, config } = fromConfig(flags);
    progress(flags, `planning against ${db}`);
    const current = snapshotFromDb(db);
    const r = dryRun(files, current, { env, kinds: KINDS, ...(safety ? { safety } : {}) });
    // offline: no geo databases, so geo-dependent cases are skipped with a note
    const routingTests = r.plan ? await runRoutingCasesForPlan(r.cases, current, r.plan, { config }) : null;
    const out: RemotePlan = { valid: r.valid, problems: r.problems, plan: r.plan ? planToJson(r.plan) : null, text: r.plan ? renderPlanText(r.plan) : '', routingTests };
    if (log !== undefined && r.plan) {
      progress(flags, 'replaying the query log');
      out.replay = await replayOffline(flags, log, current, r.plan);
    }
    return out;
  }
  const client = new ApiClient(str(flags, 'server'));
  progress(flags, `planning against ${client.base}`);
  if (log !== undefined) return client.call<RemotePlan>('POST', '/gitops/replay', { files, log });
  return client.call<RemotePlan>('POST', '/gitops/plan', { files });
}

/** The query log named by --replay, and the --max-changed percentage. Errors: exit 2. */
function replayFlags(flags: Flags): { log?: string; maxChanged?: number } {
  const file = str(flags, 'replay');
  const max = str(flags, 'max-changed');
  if (max !== undefined && !file) throw inputError('--max-changed needs --replay QUERYLOG');
  let maxChanged: number | undefined;
  if (max !== undefined) {
    maxChanged = Number(max.replace(/%$/, ''));
    if (max.trim() === '' || !Number.isFinite(maxChanged) || maxChanged < 0 || maxChanged > 100) throw inputError(`--max-changed ${max}: a percentage from 0 to 100`);
  }
  if (!file) return {};
  try {
    return { log: readFileSync(file, 'utf8'), ...(maxChanged !== undefined ? { maxChanged } : {}) };
  } catch (err) {
    throw inputError(`--replay ${file}: cannot read the query log (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}

/**
 * A replay against a database file: the daemon config from --config (its geo databases are
 * loaded; without --config, defaults and no databases) and every member healthy, since the file
 * holds no live health.
 */
async function replayOffline(flags: Flags, log: string, current: Snapshot, plan: Plan): Promise<ReplayReport> {
  const file = str(flags, 'config');
  const config = file ? loadConfig(file) : validateConfigObject({});
  const quiet = pino({ level: 'silent' });
  const lb = config.loadbalancer;
  const city = lb.geoip.dbPath ? new MmdbSource<CityResponse>(lb.geoip.dbPath, quiet) : undefined;
  const asn = lb.asn.dbPath ? new MmdbSource<AsnResponse>(lb.asn.dbPath, quiet) : undefined;
  try {
    for (const src of [city, asn]) await src?.start();
    return replayPlan(log, current, plan, { config, health: new HealthView(), geo: { city, asn, endpointLocations: lb.geoip.endpointLocations } });
  } finally {
    for (const src of [city, asn]) src?.close();
  }
}

/**
 * Manifests that cannot be planned (diff, apply): with `-o json` `{valid: false, dir, problems}`,
 * else the compiler lines of `validate` on stdout (in place of the plan) and a summary on stderr.
 * Returns 2: the input could not be used.
 */
function printProblems(flags: Flags, dir: string, problems: string[]): number {
  const located = locateProblems(problems, dir);
  const lines = located.map(formatProblem);
  if (flags.o === 'json') {
    output(flags, { valid: false, dir, problems: lines }, () => '');
  } else {
    process.stdout.write(`${lines.join('\n')}\n`);
    process.stderr.write(`${dir}: invalid (${countProblems(located)}); nothing to diff\n`);
  }
  return EXIT.INPUT;
}

COMMANDS.diff = {
  usage: 'diff DIR [--server URL | --db FILE] [--config FILE] [--replay QUERYLOG [--max-changed PERCENT]]',
  summary: 'show what applying DIR would change, and with --replay which recorded answers would change (exit 0 none, 1 changes or --max-changed exceeded, 2 invalid manifests or input, 3 daemon unreachable)',
  values: ['server', 'db', 'config', 'replay', 'max-changed'],
  booleans: [],
  async run(flags, args) {
    const { log, maxChanged } = replayFlags(flags);
    const r = await planDir(flags, args[0], log);
    if (!r.valid) return printProblems(flags, args[0]!, r.problems);
    const counts = (r.plan as { counts: { create: number; update: number; delete: number } }).counts;
    const diff = () => (isTty() ? colorDiff(r.text) : r.text).trimEnd();
    const tests = r.routingTests ?? undefined;
    const withTests = tests ? { ...r.plan, routingTests: tests } : r.plan;
    const replay = r.replay ?? undefined;
    const over = replay !== undefined && maxChanged !== undefined && replay.percent > maxChanged;
    if (!replay) output(flags, withTests, diff);
    else {
      output(flags, { ...withTests, replay, ...(maxChanged !== undefined ? { maxChanged, exceeded: over } : {}) }, () => [
        diff() || '(no changes)', '', renderReplay(replay),
        ...(maxChanged === undefined ? [] : [over ? `Over the limit: ${replay.percent.toFixed(2)} % of answers change, --max-changed is ${maxChanged} %` : `Within the limit of ${maxChanged} %`]),
      ].join('\n'));
    }
    if (tests && flags.o !== 'json') printRoutingTests(args[0]!, tests);
    // failing routing tests: the daemon would refuse this revision, like invalid manifests
    if (tests?.failed) return EXIT.INPUT;
    // with a budget the question is whether the traffic change fits it, not whether rows change
    if (replay && maxChanged !== undefined) return over ? 1 : 0;
    return counts.create + counts.update + counts.delete === 0 ? 0 : 1;
  },
};

COMMANDS.apply = {
  usage: 'apply DIR --dry-run [--server URL | --db FILE] [--config FILE]',
  summary: 'show the plan for DIR with its safety verdict; applies nothing (exit 0 would apply, 1 would be held back)',
  values: ['server', 'db', 'config'],
  booleans: ['dry-run'],
  async run(flags, args) {
    if (!flags['dry-run']) {
      process.stderr.write('gslbctl apply: only --dry-run is supported; the config repo is the source of truth: commit and push, then run `gslbctl reconcile`\n');
      return EXIT.INPUT;
    }
    const r = await planDir(flags, args[0]);
    if (!r.valid) return printProblems(flags, args[0]!, r.problems);
    const safe = (r.plan as { safety: { safe: boolean } }).safety.safe;
    const tests = r.routingTests ?? undefined;
    output(flags, tests ? { ...r.plan, routingTests: tests } : r.plan, () => `${(isTty() ? colorDiff(r.text) : r.text).trimEnd()}\n(dry run: nothing applied${safe ? '' : '; the daemon would hold this plan back until forced'}${tests?.failed ? '; the daemon would refuse it: routing tests fail' : ''})`);
    if (tests && flags.o !== 'json') printRoutingTests(args[0]!, tests);
    if (tests?.failed) return EXIT.INPUT;
    return safe ? 0 : 1;
  },
};

/**
 * Routing test outcome for a terminal: each failing case as a located problem line on stdout
 * (`DIR/file:line:1: routing test "t/c" failed: expected …; got … (routing-test)`), skipped cases
 * as notes and a summary on stderr. Prints nothing without cases.
 */
export function printRoutingTests(dir: string, run: RoutingRun): void {
  if (run.results.length === 0) return;
  const lines = (status: string) => locateProblems(run.results.filter((c) => c.status === status).map(describeResult), dir).map(formatProblem);
  const failed = lines('failed');
  if (failed.length) process.stdout.write(`${failed.join('\n')}\n`);
  for (const l of lines('skipped')) process.stderr.write(`note: ${l}\n`);
  process.stderr.write(`routing tests: ${run.passed} passed, ${run.failed} failed, ${run.skipped} skipped\n`);
}

/** How long the controller has been stalled or failing: `Stalled for 3m12s since 2026-…Z`, or undefined when it is not. */
export function renderFailingSince(s: Pick<GitOpsStatus, 'ready' | 'errorClass' | 'failingSince'>, now = Date.now()): string | undefined {
  if (s.ready || !s.failingSince) return undefined;
  const label = s.errorClass === 'stalled' ? 'Stalled' : s.errorClass === 'waiting' ? 'Waiting' : 'Failing';
  return `${label} for ${duration(now - s.failingSince)} since ${when(s.failingSince)}`;
}

const short = (sha: string | null | undefined) => (sha ? sha.slice(0, 12) : '-');
const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;

/**
 * The automatic-rollback lines of `gslbctl status` (docs/gitops.md "Automatic rollback"): the watch
 * in progress with its latest verdict, the last good revision, the last rollback and the pinned-out
 * revisions. Nothing while rollback is off and has nothing to show.
 */
export function renderRollback(rb: RollbackStatus | undefined, now = Date.now()): string[] {
  if (!rb || (!rb.enabled && !rb.lastRollback && rb.pinnedOut.length === 0)) return [];
  const w = rb.watch;
  const lines = [`Rollback:       ${rb.enabled ? 'on' : 'off'}, last good revision ${short(rb.lastGoodRevision)}`];
  if (w) {
    const v = w.last ? ` (healthy ${pct(w.last.healthyShare)}, SERVFAIL ${pct(w.last.servfailRate)} of ${w.last.queries} queries)` : '';
    lines.push(`  Watching:     ${short(w.revision)} for ${duration(Math.max(0, w.until - now))} more${v}`);
    if (w.baselineBreach) lines.push(`  Not judged:   ${w.baselineBreach} (already so before the apply)`);
  }
  if (rb.pending) lines.push(`  Rolling back: ${short(rb.pending.from)} to ${short(rb.pending.to)}: ${rb.pending.reason}`);
  const last = rb.lastRollback;
  if (last) lines.push(`  Last rollback: ${when(last.at)} ${short(last.from)}${last.to ? ` -> ${short(last.to)}` : ''} (${last.result}): ${last.reason}`);
  for (const p of rb.pinnedOut) lines.push(`  Pinned out:   ${short(p.revision)} (rolled back to ${short(p.rolledBackTo)} at ${when(p.at)})`);
  return lines;
}

/** The `gslbctl status` text (also after `reconcile`). `now` is the client's clock. */
export function renderStatus(s: GitOpsStatus & { recentRejections?: Attempt[]; provenance?: { text: string }; canary?: CanaryStatus | null }, now = Date.now()): string {
  const since = renderFailingSince(s, now);
  const lines = [
    `Ready:          ${s.ready ? 'True' : 'False'} (${s.reason}${s.errorClass ? `, ${s.errorClass}` : ''})`,
    ...(since ? [since] : []),
    `Message:        ${s.message}`,
    `Source:         ${s.repoURL ?? '-'} @ ${s.branch}`,
    `Observed:       ${s.observedRevision ?? '-'}`,
    `Last applied:   ${s.lastAppliedRevision ?? '-'} at ${when(s.lastAppliedAt)}${s.lastSigner ? ` signed by ${s.lastSigner}` : ''}`,
    ...(s.provenance ? [`Serving:        ${s.provenance.text}`] : []),
    ...(s.canary ? [renderCanary(s.canary)] : []),
    `Last attempt:   ${when(s.lastAttemptAt)}${s.failures ? ` (${s.failures} consecutive failure${s.failures === 1 ? '' : 's'})` : ''}`,
    `Next attempt:   ${when(s.nextAttemptAt)}`,
  ];
  if (!s.ready && s.lastError) lines.push(`Last error:     ${when(s.lastError.at)} ${s.lastError.reason}: ${s.lastError.message.split('\n')[0]!.slice(0, 200)}`);
  if (s.problems.length) lines.push('Problems:', ...s.problems.map((p) => `  - ${p}`));
  if (s.drift.length) lines.push('Drift corrected:', ...s.drift.map((d) => `  - ${d}`));
  lines.push(...renderRollback(s.rollback, now));
  const rej = s.recentRejections ?? [];
  if (rej.length) {
    lines.push('Recent rejections:');
    lines.push(table([['SHA', 'AT', 'REASON', 'MESSAGE'], ...rej.slice(0, 5).map((a) => [a.sha.slice(0, 12), when(a.at), a.reason, a.message.split('\n')[0]!.slice(0, 80)])]).replace(/^/gm, '  '));
  }
  return lines.join('\n');
}

COMMANDS.status = {
  usage: 'status [--server URL]',
  summary: 'the GitOps controller status: ready, since when stalled, last applied and refused revisions (exit 1 when not ready)',
  values: ['server'],
  booleans: [],
  async run(flags) {
    const s = await new ApiClient(str(flags, 'server')).call<GitOpsStatus & { recentRejections: Attempt[] }>('GET', '/gitops/status');
    output(flags, s, () => renderStatus(s));
    return s.ready ? 0 : 1;
  },
};

COMMANDS.history = {
  usage: 'history [--server URL] [--limit N]',
  summary: 'applied revisions with signer, author and message, newest first',
  values: ['server', 'limit'],
  booleans: [],
  async run(flags) {
    const limit = str(flags, 'limit') ?? '20';
    const h = await new ApiClient(str(flags, 'server')).call<HistoryEntry[]>('GET', `/gitops/history?limit=${encodeURIComponent(limit)}`);
    output(flags, h, () => (h.length === 0 ? 'no revision applied yet' : table([
      ['SHA', 'APPLIED', 'SIGNER', 'AUTHOR', 'CHANGES', 'MESSAGE'],
      ...h.map((e) => [e.sha.slice(0, 12), when(e.appliedAt), e.signer ?? '-', e.author ?? '-',
        `+${e.creates} ~${e.updates} -${e.deletes}${e.forced ? ' forced' : ''}${e.drift ? ' drift' : ''}`, (e.message ?? '').split('\n')[0]!.slice(0, 60)]),
    ])));
    return 0;
  },
};

COMMANDS.reconcile = {
  usage: 'reconcile [--server URL] [--force]',
  summary: 'fetch, verify and apply the branch head now (--force applies a plan held back by the safety thresholds, or a head pinned out by a rollback)',
  values: ['server'],
  booleans: ['force'],
  async run(flags) {
    progress(flags, 'reconciling');
    const s = await new ApiClient(str(flags, 'server')).call<GitOpsStatus>('POST', '/gitops/reconcile', { force: Boolean(flags.force) });
    output(flags, s, () => renderStatus(s));
    return s.ready ? 0 : 1;
  },
};

interface Simulated {
  name: string; type: string; clientIp: string; ecsSubnet: string | null; rcode: string; ecsScope: number | null;
  steps: { step: string; input: string[]; output: string[]; reason: string }[];
  answers: { name: string; type: string; ttl: number; data: unknown }[];
}

/** Renders a POST /simulate answer for a terminal: each step's input → output and reason, then the answer. */
export function renderExplain(r: Simulated): string {
  const list = (xs: string[]) => (xs.length ? xs.join(', ') : '(none)');
  const lines = [`${r.name} ${r.type} asked by ${r.clientIp}${r.ecsSubnet ? ` (client subnet ${r.ecsSubnet})` : ''}`];
  (r.steps ?? []).forEach((s, i) => {
    lines.push(`  ${i + 1}. ${s.step}: ${list(s.input)} -> ${list(s.output)}`);
    if (s.reason) lines.push(`     ${s.reason}`);
  });
  lines.push(`Answer: ${r.rcode}${r.ecsScope !== null && r.ecsScope !== undefined ? ` (ECS scope /${r.ecsScope})` : ''}`);
  for (const a of r.answers ?? []) lines.push(`  ${a.name} ${a.ttl} ${a.type} ${typeof a.data === 'string' ? a.data : JSON.stringify(a.data)}`);
  if ((r.answers ?? []).length === 0) lines.push('  (no records)');
  return lines.join('\n');
}

COMMANDS.explain = {
  usage: 'explain NAME --client IP [--ecs CIDR] [--type A|AAAA] [--server URL]',
  summary: 'ask the daemon how it would answer NAME for a client address, step by step',
  values: ['server', 'client', 'type', 'ecs'],
  booleans: [],
  async run(flags, args) {
    const name = args[0];
    const client = str(flags, 'client');
    if (!name || !client) throw inputError('usage: explain NAME --client IP');
    const ecs = str(flags, 'ecs');
    const r = await new ApiClient(str(flags, 'server')).call<Simulated>('POST', '/simulate', { name, clientIp: client, type: str(flags, 'type') ?? 'A', ...(ecs ? { ecsSubnet: ecs } : {}) });
    output(flags, r, () => renderExplain(r));
    return 0;
  },
};
