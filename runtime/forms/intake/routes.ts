import multipart from '@fastify/multipart';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config/types.js';
import { badRequest, GslbError, notFound } from '../../errors.js';
import type { FormRow } from '../forms/rows.js';
import { PUBLIC_ERROR_NAMES, publicStatus } from '../public/errors.js';
import { describePublicError } from '../public/routes/errors.js';
import type { RequestLimiter } from '../public/rate-limit.js';
import type { StoredFile, SubmissionFields } from '../submissions/types.js';
import type { FileVault } from '../submissions/files.js';
import { FieldCollector, jsonFields, urlEncodedFields } from './fields.js';
import { pageOrigin } from './origin.js';
import { errorPage, nextUrl, thanksPage } from './pages.js';
import type { IntakeService } from './service.js';
import { intakeDocs } from '../public/routes/intake-docs.js';

/** What the public endpoint needs. */
export interface IntakeRouteDeps {
  intake: IntakeService;
  vault: FileVault;
  limiter: RequestLimiter;
  limits: () => Config['forms']['intake'];
  /** `api.publicURL`, when set: this server's public origin */
  publicURL: () => string | undefined;
  /** the custom domain registered for a host name, if any (docs/forms.md "Domains") */
  domain: (hostname: string) => { tenantId: string; status: 'pending' | 'active' } | undefined;
}

/** Per request: the form, the posting page's origin and whether the answer is JSON. */
interface PostState { form?: FormRow; page: string | null; json: boolean; cors: string | null }
const states = new WeakMap<FastifyRequest, PostState>();

const MEDIA_TYPES = 'application/x-www-form-urlencoded, multipart/form-data or application/json';

/** True when the caller wants JSON: it accepts JSON, or it posted JSON. */
function wantsJson(req: FastifyRequest): boolean {
  return /\bapplication\/json\b/i.test(req.headers.accept ?? '') || /^application\/json\b/i.test(req.headers['content-type'] ?? '');
}

/** This server's origin as visitors reach it: `api.publicURL`, else the request's own. */
function selfOrigin(req: FastifyRequest, publicURL: string | undefined): string {
  return publicURL ? new URL(publicURL).origin : `${req.protocol}://${req.host}`;
}

/** CORS for an allowed page: its origin (or `*` when the form allows any site), never credentials. */
function corsHeaders(reply: FastifyReply, allow: string | null): void {
  if (allow === null) return;
  reply.header('access-control-allow-origin', allow);
  reply.header('vary', 'Origin');
}

/** The error of a post: status, name and message; multipart and body-parser errors named for this endpoint. */
function describe(err: FastifyError | GslbError, limits: Config['forms']['intake']): { status: number; message: string; extra?: Record<string, unknown> } {
  if (err instanceof GslbError) return { status: err.status, message: err.message, ...(err.extra ? { extra: err.extra } : {}) };
  switch (err.code) {
    case 'FST_FILES_LIMIT': return { status: 413, message: `too many files: at most ${limits.maxFiles} per submission` };
    case 'FST_REQ_FILE_TOO_LARGE': return { status: 413, message: `a file is larger than ${limits.maxFileBytes} bytes` };
    case 'FST_PARTS_LIMIT': case 'FST_FIELDS_LIMIT': return { status: 413, message: `too many fields: at most ${limits.maxFields} per submission` };
    case 'FST_ERR_CTP_BODY_TOO_LARGE': return { status: 413, message: `the body is larger than ${limits.maxBodyBytes} bytes` };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': case 'FST_INVALID_MULTIPART_CONTENT_TYPE': return { status: 415, message: `send ${MEDIA_TYPES}` };
    case 'FST_PROTO_VIOLATION': return { status: 400, message: 'a field name is not allowed (__proto__)' };
  }
  return describePublicError(err);
}

/** Reads a multipart post: text fields collected, files streamed to the vault; a broken body (a part without a name included) is a 400, nothing left on disk. */
async function multipartPost(req: FastifyRequest, formId: string, vault: FileVault, limits: Config['forms']['intake']): Promise<{ fields: SubmissionFields; files: StoredFile[] }> {
  const fields = new FieldCollector(limits.maxFields);
  const files: StoredFile[] = [];
  let textBytes = 0;
  try {
    for await (const part of req.parts()) {
      // busboy hands a part without `name=` over with no field name at all
      if (typeof part.fieldname !== 'string') throw badRequest('a multipart part has no name: each part needs Content-Disposition: form-data; name="…"');
      if (part.type === 'file') {
        const saved = await vault.save(formId, part.file);
        files.push({ field: part.fieldname, name: part.filename, type: part.mimetype, size: saved.size, path: saved.path });
        if (part.file.truncated) throw new GslbError('API_PAYLOAD_TOO_LARGE', `a file is larger than ${limits.maxFileBytes} bytes`);
        if (saved.size === 0 && part.filename === '') vault.remove([files.pop()!.path]); // a file input left empty
      } else {
        const value = typeof part.value === 'string' ? part.value : String(part.value);
        textBytes += value.length;
        if (part.valueTruncated || textBytes > limits.maxBodyBytes) throw new GslbError('API_PAYLOAD_TOO_LARGE', `the fields are larger than ${limits.maxBodyBytes} bytes`);
        fields.add(part.fieldname, value);
      }
    }
  } catch (err) {
    vault.remove(files.map((f) => f.path));
    const e = err as FastifyError;
    // a fault of this code (not of the body) is a 500 whose text stays in the log
    if (err instanceof GslbError || e.statusCode !== undefined || err instanceof TypeError || err instanceof ReferenceError) throw err;
    throw new GslbError('API_BAD_REQUEST', `malformed multipart body: ${e.message}`);
  }
  return { fields: fields.result(), files };
}

/**
 * The public submission endpoint (docs/forms.md "Submitting"), a root plugin: `POST /f/{form_id}`
 * for url-encoded, multipart (files) and JSON posts, `OPTIONS` for CORS preflights, and the
 * built-in thank-you page. Before the body is read: the per-address rate limit (429), the form
 * (404), submissions enabled and the page's origin (403). A browser post is answered with a 303
 * to the next page, a JSON caller with `{ok, next}`; errors are `{name, message}` in JSON, or a
 * small page for a browser. Visitors' posts are not audited (they are not administrative writes).
 */
export const intakeRoutes = (deps: IntakeRouteDeps) => async (root: FastifyInstance): Promise<void> => {
  await root.register(async (app) => {
    const limits = deps.limits();
    app.removeContentTypeParser('text/plain');
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: limits.maxBodyBytes }, (_req, body, done) => {
      try {
        done(null, urlEncodedFields(body as string, limits.maxFields));
      } catch (err) {
        done(err as Error, undefined);
      }
    });
    await app.register(multipart, {
      limits: { fieldNameSize: 200, fieldSize: limits.maxBodyBytes, fields: limits.maxFields, fileSize: limits.maxFileBytes, files: limits.maxFiles, parts: limits.maxFields + limits.maxFiles, headerPairs: 100 },
    });

    app.setErrorHandler((err: FastifyError | GslbError, req, reply) => {
      const d = describe(err, limits);
      const status = publicStatus(d.status);
      if (status >= 500) req.log.error({ err }, 'form post failed');
      const st = states.get(req);
      corsHeaders(reply, st?.cors ?? null);
      if (st?.json ?? wantsJson(req)) return reply.status(status).send({ name: PUBLIC_ERROR_NAMES[status], message: d.message, ...d.extra });
      return reply.status(status).type('text/html; charset=utf-8').send(errorPage(status, d.message, st?.page ?? null));
    });

    const gate = async (req: FastifyRequest<{ Params: { formId: string } }>, reply: FastifyReply) => {
      const st: PostState = { page: pageOrigin(req.headers.origin, req.headers.referer), json: wantsJson(req), cors: null };
      states.set(req, st);
      const wait = await deps.limiter.hit(req.ip);
      if (wait > 0) {
        reply.header('retry-after', String(wait));
        throw new GslbError('API_RATE_LIMITED', `too many submissions from this address; retry in ${wait} s`);
      }
      const form = deps.intake.form(req.params.formId);
      // under a custom domain, only that workspace's forms, and only once the domain is verified
      const domain = deps.domain(req.hostname);
      if (domain?.status === 'pending') throw notFound(`domain ${req.hostname} is not verified yet`);
      if (domain && domain.tenantId !== form.tenantId) throw notFound(`form ${form.id} not found`);
      deps.intake.admit(form, st.page);
      st.form = form;
      st.cors = form.allowed_domains.length === 0 ? '*' : st.page;
    };
    const config = { ownAuth: true, noAudit: true };
    const docs = intakeDocs(limits);

    // the body is read by the handler (multipart is streamed): the document describes it, fastify does not validate it
    app.post<{ Params: { formId: string }; Body: SubmissionFields | undefined }>('/f/:formId', { config: { ...config, documentBody: docs.postBody }, bodyLimit: limits.maxBodyBytes, schema: docs.post, onRequest: gate }, async (req, reply) => {
      const st = states.get(req)!;
      const form = st.form!;
      let fields: SubmissionFields;
      let files: StoredFile[] = [];
      if (req.isMultipart()) ({ fields, files } = await multipartPost(req, form.id, deps.vault, limits));
      else if (/^application\/json\b/i.test(req.headers['content-type'] ?? '')) fields = jsonFields(req.body, limits.maxFields);
      else fields = req.body ?? {};
      if (Object.keys(fields).length === 0 && files.length === 0) throw new GslbError('API_BAD_REQUEST', 'the submission is empty: send at least one field');
      await deps.intake.accept(form, { fields, files, ip: req.ip, userAgent: req.headers['user-agent'] ?? null });
      const next = nextUrl(form.success_redirect, form.id, st.page, selfOrigin(req, deps.publicURL()));
      corsHeaders(reply, st.cors);
      if (st.json) return reply.send({ ok: true, next });
      return reply.redirect(next, 303);
    });

    app.options<{ Params: { formId: string } }>('/f/:formId', { config, schema: docs.preflight, onRequest: gate }, async (req, reply) => {
      corsHeaders(reply, states.get(req)!.cors);
      reply.header('access-control-allow-methods', 'POST, OPTIONS');
      reply.header('access-control-allow-headers', 'Content-Type, Accept, X-Requested-With');
      reply.header('access-control-max-age', '600');
      return reply.status(204).send();
    });

    app.get<{ Params: { formId: string } }>('/f/:formId/thanks', { config, schema: docs.thanks }, async (req, reply) => {
      const form = deps.intake.form(req.params.formId);
      return reply.type('text/html; charset=utf-8').send(thanksPage(form.name, pageOrigin(undefined, req.headers.referer)));
    });
  });
};
