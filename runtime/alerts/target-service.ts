import type { Core } from '../app.js';
import { assertApiWritable, planCreate, planDelete, planUpdate } from '../../core/plan/delta.js';
import { getRow, rowsOf } from '../../core/snapshot/snapshot.js';
import { badRequest, conflict } from '../errors.js';
import { requireRow, type Viewer } from '../tenancy/visibility.js';
import type { AlertEvent } from './events.js';
import { rowTarget, type RowTargetDeps } from './row-targets.js';
import { secretRefProblem, type SecretPolicy } from './secret-ref.js';
import { ALERT_TARGET_KIND, alertTargetFields, alertTargetProblems, secretRefsOf, type AlertTargetFields, type AlertTargetInput, type AlertTargetRow } from './target-row.js';

/** What alert-target writes need of the core. */
export type AlertTargetCore = Pick<Core, 'holder' | 'apply' | 'apiRevision' | 'newId'>;

/**
 * The stored fields of a body for a target of `tenant`, or 400 naming every problem: settings of
 * another type, and secret references this tenant may not use or this node cannot read now (an
 * unset variable, a missing file), so a typo is refused at once rather than at the first alert.
 * A name already used by another target of the tenant is 409.
 */
export function checkedTargetFields(core: Pick<Core, 'holder'>, policy: SecretPolicy, body: AlertTargetInput, tenant: string, selfId?: string): AlertTargetFields {
  const problems = alertTargetProblems(body).map((p) => `${p.path.join('.')}: ${p.rule}`);
  const f = alertTargetFields(body);
  for (const { path, ref } of secretRefsOf(f)) {
    const why = secretRefProblem(ref, tenant, policy);
    if (why) problems.push(`${path.join('.')}: ${why}`);
  }
  if (problems.length > 0) throw badRequest(problems.join('; '));
  for (const r of rowsOf<AlertTargetRow>(core.holder.current, ALERT_TARGET_KIND).values()) {
    if (r.id !== selfId && r.tenantId === tenant && r.name === f.name) throw conflict(`name: alert target "${f.name}" already exists (${r.id})`);
  }
  return f;
}

/** Creates an alert target of `tenant` through the one write path; returns the stored row. */
export function createAlertTarget(core: AlertTargetCore, policy: SecretPolicy, tenant: string, body: AlertTargetInput): AlertTargetRow {
  const f = checkedTargetFields(core, policy, body, tenant);
  const row: AlertTargetRow = { kind: ALERT_TARGET_KIND, id: core.newId(), ...f, origin: 'api', revision: '', tenantId: tenant };
  const s = core.apply(planCreate(core.holder.current, row, core.apiRevision()));
  return getRow<AlertTargetRow>(s, ALERT_TARGET_KIND, row.id)!;
}

/** Replaces every field of a visible target (409 for a git row, which names its manifest). */
export function replaceAlertTarget(core: AlertTargetCore, policy: SecretPolicy, viewer: Viewer, id: string, body: AlertTargetInput): AlertTargetRow {
  const cur = requireRow<AlertTargetRow>(core.holder.current, viewer, ALERT_TARGET_KIND, id, 'alert target');
  assertApiWritable(cur);
  const f = checkedTargetFields(core, policy, body, cur.tenantId, cur.id);
  // the row is rebuilt, so the settings of a previous type do not linger
  const next: AlertTargetRow = { kind: ALERT_TARGET_KIND, id: cur.id, origin: cur.origin, revision: cur.revision, tenantId: cur.tenantId, ...f };
  const s = core.apply(planUpdate(core.holder.current, cur, next, core.apiRevision()));
  return getRow<AlertTargetRow>(s, ALERT_TARGET_KIND, id)!;
}

/** Deletes a visible target (409 for a git row). */
export function deleteAlertTarget(core: AlertTargetCore, viewer: Viewer, id: string): void {
  const cur = requireRow<AlertTargetRow>(core.holder.current, viewer, ALERT_TARGET_KIND, id, 'alert target');
  core.apply(planDelete(core.holder.current, cur, core.apiRevision()));
}

/**
 * The sample event of POST /alert-targets/{id}/test: member 192.0.2.1 (TEST-NET-1) of pool
 * `gslbd-test` turned healthy, so an incident service gets a resolve that pages nobody.
 */
export function sampleEvent(node: string, now = Date.now()): AlertEvent {
  return { type: 'health_transition', poolId: 'gslbd-test', ipAddress: '192.0.2.1', healthy: true, timestamp: now, node, score: 1, rttMs: 0 };
}

/**
 * Sends the sample event to a target once, through the same sender, secret resolution and HTTP
 * client as a real alert, ignoring the row's filters and `enabled` (so a target can be checked
 * before it is switched on). Resolves with the time taken; rejects with the receiver's answer, the
 * resolved secrets scrubbed out.
 */
export async function testAlertTarget(row: AlertTargetRow, deps: RowTargetDeps): Promise<{ durationMs: number; event: AlertEvent }> {
  const t = rowTarget({ ...row, enabled: true }, deps);
  const ev = sampleEvent(deps.node);
  const t0 = Date.now();
  try {
    if (row.type === 'email') {
      const m = deps.getMail();
      if (!(m.forTenant ? m.forTenant(row.tenantId) : m).configured()) throw new Error('mail is not configured for this tenant: PUT /api/v1/settings/smtp first');
    }
    await t.deliver([ev], AbortSignal.timeout(15_000));
  } catch (err) {
    let text = (err as Error).message ?? String(err);
    const body = (err as { responseText?: string }).responseText;
    if (body) text += `: ${body.slice(0, 200)}`;
    for (const s of t.secrets) if (s) text = text.split(s).join('[redacted]');
    throw new Error(text);
  }
  return { durationMs: Date.now() - t0, event: ev };
}
