import type { Db } from '../../runtime/store/db.js';
import type { Origin } from '../model/types.js';
import { txtRdata } from '../../runtime/net/character-strings.js';
import type { Plan } from '../plan/types.js';

/**
 * What a node serves and where it came from (docs/gitops.md "Provenance"): the last applied git
 * commit and its signer, and the latest applied revision of any origin (a git commit, or a REST
 * write `api:<uuid>`), when it was applied and its plan id (core/plan/plan-id.ts). Built at
 * apply time, never per query: `text` is the CHAOS TXT string and `rdata` its wire form.
 */
export interface Provenance {
  /** the last applied git commit, null before the first */
  commit: string | null;
  /** fingerprint of that commit's signer; null when signatures are not required (or unknown) */
  signer: string | null;
  /** the latest applied revision: the commit, or `api:<uuid>` for a REST write */
  revision: string | null;
  origin: Origin | null;
  /** Unix ms when the latest revision was applied on this node */
  appliedAt: number | null;
  /** plan id of the latest revision */
  planId: string | null;
  /** `commit=<sha> signer=<fpr> applied=<iso> plan=<id>`, plus ` rest=<revision>` after a REST write */
  text: string;
  /** `text` as TXT RDATA (RFC 1035 §3.3.14) */
  rdata: Buffer;
}

/** ISO 8601 UTC to the second. */
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Builds a Provenance from its fields, with the text and RDATA. Pure. */
export function makeProvenance(f: Omit<Provenance, 'text' | 'rdata'>): Provenance {
  const parts = [
    `commit=${f.commit ?? 'none'}`, `signer=${f.signer ?? 'none'}`,
    `applied=${f.appliedAt === null ? 'none' : iso(f.appliedAt)}`, `plan=${f.planId ?? 'none'}`,
  ];
  if (f.origin === 'api' && f.revision) parts.push(`rest=${f.revision}`);
  const text = parts.join(' ');
  return { ...f, text, rdata: txtRdata(text) };
}

/** A node that has applied nothing yet. */
export const NO_PROVENANCE: Provenance = makeProvenance({ commit: null, signer: null, revision: null, origin: null, appliedAt: null, planId: null });

const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);

/**
 * The provenance after `plan` was applied (or recorded) at `at`, with `meta` as written to the
 * revision (`signer`, `planId`). A REST plan keeps the commit and signer of `prev`. Pure.
 */
export function nextProvenance(prev: Provenance, plan: Plan, at: number, meta: Record<string, unknown>): Provenance {
  const git = plan.origin === 'git';
  return makeProvenance({
    commit: git ? plan.revision : prev.commit,
    signer: git ? str(meta.signer) : prev.signer,
    revision: plan.revision, origin: plan.origin, appliedAt: at, planId: str(meta.planId),
  });
}

interface RevisionRecord { revision: string; origin: Origin; applied_at: number; meta: string }

const parseMeta = (r: RevisionRecord | undefined): Record<string, unknown> => {
  try { return r ? (JSON.parse(r.meta) as Record<string, unknown>) : {}; } catch { return {}; }
};

/** The provenance recorded in the `revisions` table (at start). */
export function loadProvenance(db: Db): Provenance {
  const latest = db.prepare('SELECT revision, origin, applied_at, meta FROM revisions ORDER BY seq DESC LIMIT 1').get() as RevisionRecord | undefined;
  if (!latest) return NO_PROVENANCE;
  const git = latest.origin === 'git' ? latest
    : db.prepare("SELECT revision, origin, applied_at, meta FROM revisions WHERE origin = 'git' ORDER BY seq DESC LIMIT 1").get() as RevisionRecord | undefined;
  return makeProvenance({
    commit: git?.revision ?? null, signer: str(parseMeta(git).signer),
    revision: latest.revision, origin: latest.origin, appliedAt: latest.applied_at, planId: str(parseMeta(latest).planId),
  });
}
