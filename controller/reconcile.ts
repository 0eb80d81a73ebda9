import { readFileSync, statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { PublicKey } from 'openpgp';
import type { Core } from '../runtime/app.js';
import type { Logger } from '../runtime/log/logger.js';
import { DEFAULT_TENANT } from '../runtime/model/types.js';
import { GslbError } from '../runtime/errors.js';
import { planChanges } from './plan/plan.js';
import type { DesiredRow, Plan } from './plan/types.js';
import { ReconcileError, stalled, transient, waiting, type Reason } from './errors.js';
import { descendsFrom, fetchHead, readCommitRaw, readManifestFiles, type SourceFile, type SourceOptions } from './source/git-source.js';
import { parseCommitObject, type CommitParts } from './verify/commit-object.js';
import { readKeyring, verifyCommitSignature, type Signer } from './verify/signature.js';
import { loadManifests, type Manifest } from './load/index.js';
import { parseCacheKey, type ParseCache } from './load/manifest.js';
import { checkAgainstActual, sortProblems, validateManifests } from './validate/validate.js';
import { validationEnv } from './validate/names.js';
import type { GitOpsMetrics } from './metrics.js';
import { recordFailure, recordSuccess, type GitOpsStatus, type GitOpsStore } from './status.js';

/** What started a reconcile. A webhook carries its receipt time and the pushed SHA. */
export interface Trigger { kind: 'poll' | 'webhook' | 'manual' | 'start'; receivedAt: number; after?: string | undefined }

export interface ReconcileRequest { trigger: Trigger; force?: boolean }

/** Everything one reconcile learns, step by step. Steps read what earlier steps wrote. */
export interface ReconcileState {
  req: ReconcileRequest;
  log: Logger;
  sha?: string;
  commit?: CommitParts;
  signer?: Signer | undefined;
  files?: SourceFile[];
  manifests?: Manifest[];
  desired?: DesiredRow[];
  plan?: Plan;
  /** the plan re-applies the last applied commit: every change is drift */
  drift: boolean;
  /** the head is a revision already refused: nothing to do until a new commit (or force) */
  skip?: boolean;
  result?: 'applied' | 'noop' | 'unchanged';
  /** milliseconds per step, for the summary log line */
  timings: Record<string, number>;
}

/** One reconcile step: reads state, may add to it, throws a ReconcileError to stop. */
export type Step = (r: Reconciler, st: ReconcileState) => Promise<void>;

export interface ReconcilerDeps {
  core: Core;
  store: GitOpsStore;
  metrics: GitOpsMetrics;
  source: SourceOptions;
  now?: () => number;
}

/**
 * The GitOps reconciler (DESIGN data flow): `source → verify → load → validate → plan → apply`, each
 * a step of one shape, stopping at the first failure; a final step always records status, events,
 * logs and metrics. Idempotent: running it twice on the same commit changes nothing the second time
 * (apart from correcting drift).
 */
export class Reconciler {
  readonly core: Core;
  readonly store: GitOpsStore;
  readonly metrics: GitOpsMetrics;
  readonly source: SourceOptions;
  readonly now: () => number;
  status: GitOpsStatus;
  /** the last verified, loaded and validated commit (verification is not repeated per poll) */
  loaded: { sha: string; stamp: string; commit: CommitParts; signer: Signer | undefined; desired: DesiredRow[] } | undefined;
  /** the last refused commit, so a stalled head is not re-checked and re-announced every poll */
  refused: { sha: string; stamp: string; error: ReconcileError } | undefined;
  /** parsed YAML of the last loaded commit's files, by path and blob id */
  readonly parseCache: ParseCache = new Map();
  private keys: { stamp: string; keys: PublicKey[] } | undefined;
  private seq = 0;

  constructor(deps: ReconcilerDeps) {
    this.core = deps.core;
    this.store = deps.store;
    this.metrics = deps.metrics;
    this.source = deps.source;
    this.now = deps.now ?? Date.now;
    const g = deps.core.config.gitops;
    const prev = deps.store.loadStatus();
    this.status = {
      enabled: true, repoURL: g.repoURL ?? null, branch: g.branch, ready: false, reason: 'Progressing', message: 'waiting for the first reconcile',
      errorClass: null, problems: [], observedRevision: prev?.observedRevision ?? null, lastAppliedRevision: deps.store.lastApplied() ?? null,
      lastAppliedAt: prev?.lastAppliedAt ?? null, lastSigner: prev?.lastSigner ?? null, lastAttemptAt: prev?.lastAttemptAt ?? null,
      lastPlan: prev?.lastPlan ?? null, drift: [], failures: 0, nextAttemptAt: null,
      // a stall outlives a restart: "stalled since" keeps its start until a reconcile succeeds
      failingSince: prev && !prev.ready ? prev.failingSince ?? null : null, lastError: prev?.lastError ?? null,
    };
  }

  /** Stamp of the trust inputs: a changed keyring file invalidates cached verdicts. */
  keyringStamp(): string {
    const f = this.core.config.gitops.keyringFile;
    if (!f) return '-';
    try { const st = statSync(f); return `${st.mtimeMs}:${st.size}`; } catch { return 'missing'; }
  }

  /** The parsed keyring, re-read when the file changes. Errors: stalled KeyringInvalid. */
  async keyring(): Promise<PublicKey[]> {
    const f = this.core.config.gitops.keyringFile;
    if (!f) throw stalled('KeyringInvalid', 'gitops.requireSignature is true but gitops.keyringFile is not set');
    const stamp = this.keyringStamp();
    if (this.keys?.stamp === stamp) return this.keys.keys;
    let text: string;
    try { text = readFileSync(f, 'utf8'); } catch (err) {
      throw stalled('KeyringInvalid', `cannot read gitops.keyringFile ${f}: ${(err as Error).message}`, { cause: err });
    }
    const keys = await readKeyring(text, f);
    this.keys = { stamp, keys };
    return keys;
  }

  /**
   * Runs one reconcile. Never throws: the outcome is in the returned status (also kept in
   * `this.status` and persisted). Callers serialise calls (the loop does).
   */
  async reconcile(req: ReconcileRequest): Promise<{ status: GitOpsStatus; error?: ReconcileError }> {
    const started = this.now();
    const reconcileId = `${started.toString(36)}-${++this.seq}`;
    const st: ReconcileState = { req, drift: false, timings: {}, log: this.core.log.child({ component: 'gitops', reconcileId }) };
    let error: ReconcileError | undefined;
    try {
      for (const [name, step] of STEPS) {
        const t0 = performance.now();
        try {
          await step(this, st);
        } finally {
          st.timings[name] = Math.round((performance.now() - t0) * 10) / 10;
        }
        if (st.skip || (st.result === 'unchanged' && name === 'plan')) break;
        if (name === 'source') st.log = st.log.child({ revision: st.sha });
      }
    } catch (err) {
      error = err instanceof ReconcileError ? err : transient('ApplyFailed', (err as Error).message, { cause: err });
    }
    try {
      recordOutcome(this, st, error, started);
    } catch (err) {
      // recording must not stop the loop (e.g. a full disk while writing the attempt)
      st.log.error({ err }, 'recording the reconcile outcome failed');
    }
    return error ? { status: this.status, error } : { status: this.status };
  }
}

/**
 * source: fetch the branch head into the local cache. In a cluster with config sync only the
 * holder of the git lease pulls; the others end the reconcile as `waiting` (NotLeader) and receive
 * the applied plan through the config stream (DESIGN decision 8).
 */
export const reconcileSource: Step = async (r, st) => {
  const leader = r.core.ports.gitLeader;
  if (leader && !leader.holds()) throw waiting('NotLeader', 'another node holds the git lease; its applied revisions arrive through the config stream');
  try {
    st.sha = await fetchHead(r.source);
    r.metrics.fetch.inc({ result: 'success' });
  } catch (err) {
    r.metrics.fetch.inc({ result: 'failure' });
    throw err;
  }
  r.status.observedRevision = st.sha;
  const stamp = r.keyringStamp();
  if (!st.req.force && r.refused?.sha === st.sha && r.refused.stamp === stamp) st.skip = true;
};

/** verify: the commit's OpenPGP signature and signer, and that it descends from the last applied one. */
export const reconcileVerify: Step = async (r, st) => {
  const sha = st.sha!;
  const g = r.core.config.gitops;
  const stamp = r.keyringStamp();
  try {
    // the signature verdict of a commit is cached; ancestry depends on what was applied since, so
    // it is checked every time
    if (r.loaded && r.loaded.sha === sha && r.loaded.stamp === stamp) {
      st.commit = r.loaded.commit;
      st.signer = r.loaded.signer;
    } else {
      st.commit = parseCommitObject(await readCommitRaw(r.source.gitdir, sha));
      if (g.requireSignature) st.signer = await verifyCommitSignature(st.commit, await r.keyring(), g.allowedSigners);
    }
    const last = r.store.lastApplied();
    if (last && !g.allowRewind && !(await descendsFrom(r.source.gitdir, sha, last))) {
      throw stalled('HistoryRewound', `commit ${sha.slice(0, 12)} does not descend from the last applied commit ${last.slice(0, 12)}; push a commit on top of it, or set gitops.allowRewind`);
    }
    r.metrics.verify.inc({ result: 'success' });
  } catch (err) {
    r.metrics.verify.inc({ result: 'failure' });
    if (err instanceof ReconcileError) throw err;
    throw stalled('SignatureInvalid', `cannot read commit ${sha}: ${(err as Error).message}`, { cause: err });
  }
};

/** load: every *.yaml under pathPrefix, parsed into manifests (syntax errors with file:line). */
export const reconcileLoad: Step = async (r, st) => {
  const cached = r.loaded;
  if (cached && cached.sha === st.sha && cached.stamp === r.keyringStamp()) { st.desired = cached.desired; return; }
  try {
    st.files = await readManifestFiles(r.source.gitdir, st.sha!, r.core.config.gitops.pathPrefix, (p, oid) => r.parseCache.has(parseCacheKey(p, oid)));
  } catch (err) {
    throw transient('FetchFailed', `reading the tree of ${st.sha}: ${(err as Error).message}`, { cause: err });
  }
  const { manifests, problems } = loadManifests(st.files, r.parseCache);
  st.manifests = manifests;
  // syntax errors and schema errors are reported together: validation runs on what did parse
  if (problems.length) {
    const more = validateManifests(manifests, validationEnv(r.core.config)).problems;
    throw invalid(sortProblems([...problems, ...more]));
  }
};

/** validate: schemas, unknown kinds, unique names, references, required-when rules — every problem. */
export const reconcileValidate: Step = async (r, st) => {
  if (!st.desired) {
    const { desired, problems } = validateManifests(st.manifests!, validationEnv(r.core.config));
    if (problems.length) throw invalid(problems);
    st.desired = desired;
    r.loaded = { sha: st.sha!, stamp: r.keyringStamp(), commit: st.commit!, signer: st.signer, desired };
  }
  const clash = checkAgainstActual(st.desired, r.core.holder.current, validationEnv(r.core.config));
  if (clash.length) throw invalid(clash);
};

function invalid(problems: string[]): ReconcileError {
  return stalled('ManifestsInvalid', `${problems.length} problem${problems.length === 1 ? '' : 's'} in the manifests: ${problems[0]}${problems.length > 1 ? ' …' : ''}`, { problems });
}

/** plan: desired × actual → Plan (pure), with the configured safety thresholds. */
export const reconcilePlan: Step = async (r, st) => {
  const sha = st.sha!;
  try {
    st.plan = planChanges({
      desired: st.desired!, actual: r.core.holder.current, revision: sha, newId: () => r.core.newId(),
      tenantId: DEFAULT_TENANT, safety: r.core.config.gitops.safety,
    });
  } catch (err) {
    throw stalled('ManifestsInvalid', (err as Error).message, { cause: err, problems: [(err as Error).message] });
  }
  const last = r.store.lastApplied();
  st.drift = last === sha && st.plan.changes.length > 0;
  if (last === sha && st.plan.changes.length === 0) st.result = 'unchanged';
  if (!st.plan.safety.safe && !st.req.force) {
    throw stalled(st.plan.safety.reason as Reason, st.plan.safety.message ?? 'plan is unsafe');
  }
};

/** apply: one transaction and one snapshot swap through core.apply, with the commit recorded. */
export const reconcileApply: Step = async (r, st) => {
  const plan = st.plan!;
  const c = st.commit!;
  const meta = {
    sha: st.sha, signer: st.signer?.fingerprint ?? null, signingKey: st.signer?.signingKey ?? null, signerUserId: st.signer?.userId ?? null,
    author: `${c.author.name} <${c.author.email}>`, committer: `${c.committer.name} <${c.committer.email}>`,
    message: c.message.trim(), commitTime: c.committer.timestamp * 1000, forced: Boolean(st.req.force && !plan.safety.safe),
    trigger: st.req.trigger.kind, drift: st.drift, branch: r.core.config.gitops.branch,
  };
  try {
    // a commit that changes nothing is still recorded, so history and ancestry follow the branch
    r.core.apply(plan, { force: Boolean(st.req.force), meta, recordEmpty: true });
    st.result = plan.changes.length === 0 ? 'noop' : 'applied';
  } catch (err) {
    if (err instanceof GslbError && err.code === 'API_CONFLICT') throw transient('ApplyConflict', err.message, { cause: err });
    throw transient('ApplyFailed', (err as Error).message, { cause: err });
  }
  const swapped = r.now();
  if (st.result === 'applied' && !st.drift) {
    const t = st.req.trigger;
    const fromWebhook = t.kind === 'webhook' && t.after === st.sha;
    const start = fromWebhook ? t.receivedAt : c.committer.timestamp * 1000;
    r.metrics.commitToServing.observe({ trigger: fromWebhook ? 'webhook' : 'poll' }, Math.max(0, swapped - start) / 1000);
  }
};

/** The steps in order. */
export const STEPS: [string, Step][] = [
  ['source', reconcileSource], ['verify', reconcileVerify], ['load', reconcileLoad],
  ['validate', reconcileValidate], ['plan', reconcilePlan], ['apply', reconcileApply],
];

/** The final step: status, persisted status, events, the one summary log line, and metrics. */
function recordOutcome(r: Reconciler, st: ReconcileState, error: ReconcileError | undefined, started: number): void {
  const now = r.now();
  const s = r.status;
  s.lastAttemptAt = now;
  const plan = st.plan;
  const counts = plan?.counts ?? { create: 0, update: 0, delete: 0 };
  r.metrics.reconcileSeconds.observe((now - started) / 1000);
  if (st.skip && r.refused) {
    // still stalled on the same head: not re-announced, but the status shows the poll happened
    // (failures, lastAttemptAt and lastError advance; failingSince stays)
    const e = r.refused.error;
    s.ready = false; s.reason = e.reason; s.message = e.message; s.errorClass = e.errorClass; s.problems = e.problems;
    recordFailure(s, now, e);
    st.log.debug({ sha: st.sha, reason: e.reason }, 'reconcile skipped: head was already refused');
    try { r.store.saveStatus(s); } catch (err) { st.log.error({ err }, 'saving gitops status failed'); }
    return;
  }
  if (error) {
    s.ready = false; s.reason = error.reason; s.message = error.message; s.errorClass = error.errorClass; s.problems = error.problems;
    recordFailure(s, now, error);
    r.metrics.ready.set(0);
    if (error.errorClass === 'stalled' && st.sha) {
      r.refused = { sha: st.sha, stamp: r.keyringStamp(), error };
      if (error.reason === 'TooManyDeletes' || error.reason === 'TooManyUpdates') r.metrics.apply.inc({ result: 'held' });
      else if (error.reason === 'ManifestsInvalid') r.metrics.apply.inc({ result: 'invalid' });
      r.metrics.rejected.inc({ reason: error.reason });
      r.store.recordAttempt({ sha: st.sha, at: now, reason: error.reason, class: error.errorClass, message: error.message, problems: error.problems, trigger: st.req.trigger.kind });
      const payload = { revision: st.sha, reason: error.reason, message: error.message };
      r.core.bus.emit('gitops_rejected', payload);
      r.core.bus.emit('ws_message', { type: 'gitops_rejected', payload: { ...payload, problems: error.problems } });
    } else if (error.reason === 'ApplyFailed' || error.reason === 'ApplyConflict') {
      r.metrics.apply.inc({ result: 'failure' });
    }
    st.log.warn({
      result: 'failed', reason: error.reason, errorClass: error.errorClass, sha: st.sha, problems: error.problems.length ? error.problems : undefined,
      err: error.cause ?? undefined, ms: now - started, steps: st.timings, ...counts,
    }, `reconcile failed: ${error.reason}`);
  } else {
    const wasDrift = st.drift;
    s.ready = true; s.reason = 'Succeeded'; s.errorClass = null; s.problems = [];
    recordSuccess(s, now);
    s.message = st.result === 'unchanged' ? `revision ${st.sha!.slice(0, 12)} is applied; no drift`
      : wasDrift ? `revision ${st.sha!.slice(0, 12)}: corrected drift in ${plan!.changes.length} resource(s)`
        : `applied revision ${st.sha!.slice(0, 12)} (creates=${counts.create} updates=${counts.update} deletes=${counts.delete})`;
    s.drift = wasDrift ? plan!.changes.map((c) => c.label) : [];
    // the state moved on: a head refused earlier is judged afresh if it comes back
    r.refused = undefined;
    if (st.result !== 'unchanged') {
      s.lastAppliedRevision = st.sha!; s.lastAppliedAt = now; s.lastSigner = st.signer?.fingerprint ?? null;
      if (plan!.changes.length) s.lastPlan = counts;
      r.metrics.apply.inc({ result: st.result === 'noop' ? 'noop' : 'success' });
      r.metrics.lastApplyInfo.reset();
      r.metrics.lastApplyInfo.set({ sha: st.sha!, signer: st.signer?.fingerprint ?? '' }, 1);
    }
    if (wasDrift) {
      r.metrics.drift.inc(plan!.changes.length);
      st.log.warn({ drift: s.drift }, 'drift detected on git-owned resources; corrected');
    }
    r.metrics.ready.set(1);
    // an unchanged head is every quiet poll: debug, so info shows what changed (docs/logging.md)
    st.log[st.result === 'unchanged' ? 'debug' : 'info']({ result: st.result, sha: st.sha, signer: st.signer?.fingerprint, ms: now - started, steps: st.timings, ...counts, forced: Boolean(st.req.force) || undefined },
      `reconcile ${st.result}: plan creates=${counts.create} updates=${counts.update} deletes=${counts.delete}`);
  }
  try { r.store.saveStatus(s); } catch (err) { st.log.error({ err }, 'saving gitops status failed'); }
}
