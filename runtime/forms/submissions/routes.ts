import type { FastifyPluginAsync } from 'fastify';
import type { IdParams } from '../../api/schemas.js';
import type { FormService } from '../forms/service.js';
import { parsePage } from '../public/list.js';
import { formRoute } from '../public/routes/docs.js';
import { callerOf } from '../public/routes/server.js';
import type { FileVault } from './files.js';
import type { Replay, SubmissionClaim, SubmissionListQuery } from './route-types.js';
import { submissionQuery, type SubmissionService } from './service.js';
import { attachmentHeader, submissionView } from './views.js';

/** Path numbers arrive as text (the API does not coerce types): whole numbers, checked by pattern. */
const sidParams = {
  type: 'object', additionalProperties: false, required: ['id', 'sid'],
  properties: { id: { type: 'string', minLength: 1, maxLength: 200 }, sid: { type: 'string', pattern: '^[1-9][0-9]{0,14}$', description: 'the submission id' } },
} as const;
const fileParams = {
  ...sidParams, required: ['id', 'sid', 'index'],
  properties: { ...sidParams.properties, index: { type: 'string', pattern: '^[0-9]{1,4}$', description: "the file's index in the submission" } },
} as const;

type SidParams = { id: string; sid: string };

/**
 * A form's submissions (docs/forms.md "Submissions"): the list with its filters, claim, replay,
 * and a stored file's bytes (always as an attachment, never rendered).
 */
export const submissionRoutes = (forms: FormService, subs: SubmissionService, vault: FileVault): FastifyPluginAsync => async (app) => {
  app.get<{ Params: IdParams; Querystring: SubmissionListQuery }>('/form/:id/submission', formRoute({
    operationId: 'get_form_id_submission', summary: "A page of a form's submissions", scope: 'submissions:read', form: 'path', id: true, querystring: 'SubmissionListQuery',
    description: 'Newest first by default. Spam is left out unless `getSpam` is given; `claimed`, `since` and `until` narrow the list.',
    success: { status: 200, description: 'a page of submissions', schema: 'SubmissionList' },
  }), async (req) => {
    const form = forms.require(callerOf(req).tenantId, req.params.id);
    const q = submissionQuery(parsePage(req.query), req.query);
    const { rows, total } = subs.list(form, q);
    return { data: rows.map(submissionView), page: q.page, limit: q.limit, total };
  });

  app.post<{ Params: SidParams; Body: SubmissionClaim }>('/form/:id/submission/:sid/claim', formRoute({
    operationId: 'post_form_id_submission_sid_claim', summary: 'Claim a submission (mark it picked up)', scope: 'forms:write', form: 'path', id: true,
    params: sidParams, body: 'SubmissionClaim', errors: [409],
    description: 'Marks the submission picked up by `by` (default: the API key\'s name), stops its reminders and emits `submission.claimed`. A submission is claimed once: 409 when it already is.',
    success: { status: 200, description: 'the claimed submission', schema: 'Submission' },
  }), async (req) => {
    const caller = callerOf(req);
    const form = forms.require(caller.tenantId, req.params.id);
    return submissionView(await subs.claim(form, Number(req.params.sid), req.body.by?.trim() || caller.keyName));
  });

  app.post<{ Params: IdParams; Body: Replay }>('/form/:id/replay', formRoute({
    operationId: 'post_form_id_replay', summary: "Run a form's actions again for submissions", scope: 'forms:write', form: 'path', id: true, body: 'Replay',
    description: 'Queues a delivery of each enabled action whose conditions the submission meets, for up to 100 submissions of the form. Every id must be the form\'s (404 naming the others); nothing is queued otherwise.',
    success: { status: 200, description: 'what was queued', schema: 'Replayed' },
  }), async (req) => {
    const form = forms.require(callerOf(req).tenantId, req.params.id);
    return { form_id: form.id, ...(await subs.replay(form, req.body.submission_ids)) };
  });

  app.get<{ Params: SidParams & { index: string } }>('/form/:id/submission/:sid/file/:index', formRoute({
    operationId: 'get_form_id_submission_sid_file_index', summary: 'A file sent with a submission', scope: 'submissions:read', form: 'path', id: true, params: fileParams,
    description: 'The bytes of the submission\'s file number `index` (its `files[].index`), as an attachment (`application/octet-stream`, never rendered by a browser).',
    success: { status: 200, description: 'the file', schema: 'binary' },
  }), async (req, reply) => {
    const form = forms.require(callerOf(req).tenantId, req.params.id);
    const f = subs.file(form, Number(req.params.sid), Number(req.params.index));
    reply.header('content-disposition', attachmentHeader(f.name)).header('x-content-type-options', 'nosniff').type('application/octet-stream');
    return reply.send(await vault.openShared(f.path));
  });
};
