import type { Db } from '../../store/db.js';
import type { Logger } from '../../log/logger.js';
import type { MailPort } from '../../ports/mail.js';
import type { FormActionRow, FormRow } from '../forms/rows.js';
import type { SubmissionRecord } from '../submissions/types.js';
import { submissionView } from '../submissions/views.js';
import { digestMessage, digestWindow, type DigestInterval } from './digest.js';

/** The most submissions one digest lists (the count in its subject is exact). */
export const DIGEST_MAX = 500;

/** What the digest runs read and call. */
export interface DigestDeps {
  db: Db;
  /** every `email_digest` action with its form */
  digests: () => { action: FormActionRow; form: FormRow }[];
  inWindow: (formId: string, start: number, end: number, limit: number) => SubmissionRecord[];
  mailer: (tenantId: string) => MailPort;
  log: Logger;
}

/**
 * Records that a digest covered its window up to `windowEnd` (a later window than the one
 * recorded only; a cluster's nodes record the holder's runs in any order).
 */
export function recordDigestRun(db: Db, actionId: string, windowEnd: number, sentAt: number, submissions: number): void {
  db.prepare(`INSERT INTO form_digest_runs (action_id, window_end, sent_at, submissions) VALUES (?, ?, ?, ?)
    ON CONFLICT (action_id) DO UPDATE SET window_end = excluded.window_end, sent_at = excluded.sent_at, submissions = excluded.submissions
    WHERE excluded.window_end > form_digest_runs.window_end`).run(actionId, windowEnd, sentAt, submissions);
}

/**
 * `email_digest` actions (docs/forms.md "Digests"): at each check, every enabled digest whose last
 * whole window (hour, day, or week from Monday, UTC) has not been covered yet mails the non-spam
 * submissions received in it, oldest first, with the window in the subject. An empty window sends
 * nothing. A window is recorded as covered once its mail is accepted (or found empty), so a failed
 * send is tried again at the next check and a window is never sent twice. Conditions apply: a
 * digest lists the submissions its conditions select.
 */
export class DigestRuns {
  /** in a cluster: told each window covered, so every node records it (the next lease holder too) */
  onCovered: ((actionId: string, windowEnd: number, sentAt: number, submissions: number) => void) | undefined;

  constructor(private readonly deps: DigestDeps) {}

  /** Runs every due digest at `now`; resolves with how many mails were sent. */
  async run(now: number, matches: (action: FormActionRow, s: SubmissionRecord) => boolean): Promise<number> {
    let sent = 0;
    for (const { action, form } of this.deps.digests()) {
      if (!action.enabled) continue;
      const w = digestWindow(action.config.interval as DigestInterval, now);
      const last = this.deps.db.prepare('SELECT window_end FROM form_digest_runs WHERE action_id = ?').get(action.id) as { window_end: number } | undefined;
      if (last && last.window_end >= w.end) continue;
      const subs = this.deps.inWindow(form.id, w.start, w.end, DIGEST_MAX).filter((s) => matches(action, s));
      if (subs.length > 0) {
        const label = `${new Date(w.start).toISOString().slice(0, 16).replace('T', ' ')} to ${new Date(w.end).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
        const msg = digestMessage(action.config, form, subs.map((s) => submissionView(s)), label);
        try {
          await this.deps.mailer(action.tenantId).send(msg);
          sent++;
        } catch (err) {
          this.deps.log.warn({ action: action.id, detail: (err as Error).message }, 'form digest not sent; tried again at the next check');
          continue;
        }
      }
      recordDigestRun(this.deps.db, action.id, w.end, now, subs.length);
      this.onCovered?.(action.id, w.end, now, subs.length);
    }
    return sent;
  }
}
