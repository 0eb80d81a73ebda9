import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { api, startTestDaemon } from '../helpers/daemon.js';
import { PACKAGE_ROOT } from '../../runtime/paths.js';

type Responses = Record<string, { content?: Record<string, { schema?: unknown }> }>;
type Operation = { operationId?: string; responses?: Responses; security?: unknown[] };
type Doc = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } };

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch']);

/** Every operation of the document with its method and path. */
function operationsOf(doc: Doc): { method: string; path: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).filter(([m]) => METHODS.has(m)).map(([method, op]) => ({ method, path, op })));
}

/** Every `$ref` in the document (extensions included). */
function refsOf(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const v of node) refsOf(v, out);
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refsOf(v, out);
    }
  }
  return out;
}

/**
 * Request shapes the handlers declare in TypeScript (route generics) and the operation part the
 * schema gives them: the generated type and the declared one must agree (same keys, same
 * optionality, and the same type wherever the generated one is more precise than `unknown`).
 */
const DECLARED: { op: string; part: 'body' | 'path' | 'query'; type: string; file: string }[] = [
  { op: 'createPool', part: 'body', type: 'PoolBody', file: 'runtime/resources/routes/types.ts' },
  { op: 'updatePool', part: 'body', type: 'PoolBody', file: 'runtime/resources/routes/types.ts' },
  { op: 'getPool', part: 'path', type: 'IdParams', file: 'runtime/api/schemas.ts' },
  { op: 'createMember', part: 'body', type: 'MemberCreate', file: 'runtime/resources/routes/types.ts' },
  { op: 'updateMember', part: 'body', type: 'MemberUpdate', file: 'runtime/resources/routes/types.ts' },
  { op: 'createService', part: 'body', type: 'ServiceBody', file: 'runtime/resources/routes/types.ts' },
  { op: 'updateService', part: 'body', type: 'ServiceBody', file: 'runtime/resources/routes/types.ts' },
  { op: 'createTxtRecord', part: 'body', type: 'TxtRecordBody', file: 'runtime/txt/route-types.ts' },
  { op: 'updateTxtRecord', part: 'body', type: 'TxtRecordBody', file: 'runtime/txt/route-types.ts' },
  { op: 'createRedirect', part: 'body', type: 'RedirectBody', file: 'runtime/redirect/route-types.ts' },
  { op: 'updateRedirect', part: 'body', type: 'RedirectBody', file: 'runtime/redirect/route-types.ts' },
  { op: 'getRedirect', part: 'path', type: 'IdParams', file: 'runtime/api/schemas.ts' },
  { op: 'createAlertTarget', part: 'body', type: 'AlertTargetBody', file: 'runtime/alerts/route-types.ts' },
  { op: 'updateAlertTarget', part: 'body', type: 'AlertTargetBody', file: 'runtime/alerts/route-types.ts' },
  { op: 'testAlertTarget', part: 'path', type: 'IdParams', file: 'runtime/api/schemas.ts' },
  { op: 'putHealthCheck', part: 'body', type: 'HealthCheckBody', file: 'runtime/resources/routes/types.ts' },
  { op: 'createGeoRule', part: 'body', type: 'GeoRuleBody', file: 'runtime/resources/routes/types.ts' },
  { op: 'simulateQuery', part: 'body', type: 'SimulateBody', file: 'runtime/dns/route-types.ts' },
  { op: 'openLiveFeed', part: 'query', type: 'WsQuery', file: 'runtime/ws/route-types.ts' },
  { op: 'getClusterHealth', part: 'query', type: 'ClusterHealthQuery', file: 'runtime/cluster/route-types.ts' },
  { op: 'setDemoBackend', part: 'path', type: 'DemoBackendParams', file: 'runtime/demo/route-types.ts' },
  { op: 'setupFirstUser', part: 'body', type: 'SetupBody', file: 'runtime/auth/routes/types.ts' },
  { op: 'login', part: 'body', type: 'LoginBody', file: 'runtime/auth/routes/types.ts' },
  { op: 'verifyTotp', part: 'body', type: 'TotpVerifyBody', file: 'runtime/auth/routes/types.ts' },
  { op: 'requestPasswordReset', part: 'body', type: 'PasswordResetBody', file: 'runtime/auth/routes/types.ts' },
  { op: 'confirmPasswordReset', part: 'body', type: 'PasswordResetConfirmBody', file: 'runtime/auth/routes/types.ts' },
  { op: 'createUser', part: 'body', type: 'UserCreateBody', file: 'runtime/auth/routes/types.ts' },
  { op: 'updateUser', part: 'body', type: 'UserUpdateBody', file: 'runtime/auth/routes/types.ts' },
  { op: 'createTenant', part: 'body', type: 'TenantCreateBody', file: 'runtime/auth/routes/types.ts' },
  { op: 'createTenantApiKey', part: 'body', type: 'ApiKeyCreateBody', file: 'runtime/auth/routes/types.ts' },
  { op: 'createTenantApiKey', part: 'path', type: 'TenantParams', file: 'runtime/auth/routes/types.ts' },
  { op: 'deleteTenantApiKey', part: 'path', type: 'ApiKeyParams', file: 'runtime/auth/routes/types.ts' },
  { op: 'completeSingleSignOn', part: 'query', type: 'OidcCallbackQuery', file: 'runtime/auth/routes/types.ts' },
  { op: 'getUser', part: 'path', type: 'IdParams', file: 'runtime/api/schemas.ts' },
  { op: 'putMailSettings', part: 'body', type: 'MailSettingsBody', file: 'runtime/mail/route-types.ts' },
  { op: 'testMailSettings', part: 'body', type: 'MailTestBody', file: 'runtime/mail/route-types.ts' },
  { op: 'listGitOpsHistory', part: 'query', type: 'HistoryQuery', file: 'gitops/route-types.ts' },
  { op: 'reconcileGitOps', part: 'body', type: 'ReconcileBody', file: 'gitops/route-types.ts' },
  { op: 'planGitOps', part: 'body', type: 'PlanBody', file: 'gitops/route-types.ts' },
  { op: 'replayGitOps', part: 'body', type: 'ReplayBody', file: 'gitops/replay/route-types.ts' },
  { op: 'get_form', part: 'query', type: 'FormListQuery', file: 'runtime/forms/forms/routes/types.ts' },
  { op: 'post_form', part: 'body', type: 'FormCreate', file: 'runtime/forms/forms/routes/types.ts' },
  { op: 'patch_form_id', part: 'body', type: 'FormChange', file: 'runtime/forms/forms/routes/types.ts' },
  { op: 'delete_form_id', part: 'body', type: 'FormDelete', file: 'runtime/forms/forms/routes/types.ts' },
  { op: 'post_form_id_duplicate', part: 'body', type: 'FormDuplicate', file: 'runtime/forms/forms/routes/types.ts' },
  { op: 'put_form_id_schema', part: 'body', type: 'SchemaPut', file: 'runtime/forms/forms/routes/types.ts' },
  { op: 'get_form_id_action', part: 'query', type: 'PageQuery', file: 'runtime/forms/forms/routes/types.ts' },
  { op: 'post_form_id_action', part: 'body', type: 'ActionCreate', file: 'runtime/forms/forms/routes/types.ts' },
  { op: 'get_form_id_submission', part: 'query', type: 'SubmissionListQuery', file: 'runtime/forms/submissions/route-types.ts' },
  { op: 'post_form_id_submission_sid_claim', part: 'body', type: 'SubmissionClaim', file: 'runtime/forms/submissions/route-types.ts' },
  { op: 'post_form_id_replay', part: 'body', type: 'Replay', file: 'runtime/forms/submissions/route-types.ts' },
  { op: 'patch_action_id', part: 'body', type: 'ActionChange', file: 'runtime/forms/forms/routes/types.ts' },
  { op: 'delete_action_id', part: 'body', type: 'ActionRef', file: 'runtime/forms/forms/routes/types.ts' },
  { op: 'post_action_id_test', part: 'body', type: 'ActionTest', file: 'runtime/forms/forms/routes/types.ts' },
  { op: 'get_action_id_deliveries', part: 'query', type: 'DeliveryListQuery', file: 'runtime/forms/forms/routes/types.ts' },
  { op: 'post_email_template_preview', part: 'body', type: 'TemplatePreview', file: 'runtime/forms/forms/routes/types.ts' },
  { op: 'post_domain', part: 'body', type: 'DomainCreate', file: 'runtime/forms/forms/routes/types.ts' },
  { op: 'delete_domain_id', part: 'body', type: 'DomainRef', file: 'runtime/forms/forms/routes/types.ts' },
  { op: 'get_domain', part: 'query', type: 'PageQuery', file: 'runtime/forms/forms/routes/types.ts' },
];

const HELPERS = `
type Assert<T extends true> = T;
type IsAny<T> = 0 extends 1 & T ? true : false;
/** neither never, nor any, nor unknown */
type Known<T> = [T] extends [never] ? false : IsAny<T> extends true ? false : unknown extends T ? false : true;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type RequiredKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T];
/** unknown, or an array of unknown, in the generated type: the schema says more than TypeScript can */
type Vague<G> = unknown extends G ? true : NonNullable<G> extends readonly (infer E)[] ? (unknown extends E ? true : false) : false;
type PropAgrees<G, O> = Vague<G> extends true ? true : Same<G, O>;
type Agree<G, O> = Same<keyof G, keyof O> extends true
  ? Same<RequiredKeys<G>, RequiredKeys<O>> extends true
    ? false extends { [K in keyof G & keyof O]-?: PropAgrees<G[K], O[K]> }[keyof G & keyof O] ? false : true
    : false
  : false;
type Body<Op> = Op extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;
type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;
/** the JSON body of an operation's success response */
type Ok<Op> = Op extends { responses: infer R } ? { [S in keyof R]: S extends 200 | 201 ? Json<R[S]> : never }[keyof R] : never;
`;

/**
 * A typed client of two operations, written only against the generated types: it must compile
 * (request body checked, response fields typed).
 */
const CLIENT = `
async function call<Op>(base: string, method: string, path: string, body?: Body<Op>): Promise<Ok<Op>> {
  const res = await fetch(base + path, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!res.ok) throw new Error(((await res.json()) as components['schemas']['resources-Error']).error);
  return (await res.json()) as Ok<Op>;
}
export async function renamePool(base: string, name: string): Promise<string> {
  const created = await call<operations['createPool']>(base, 'POST', '/api/v1/pools', { name });
  const id: string = created.id;
  const origin: 'git' | 'api' | 'config' = created.origin;
  const pool = await call<operations['getPool']>(base, 'GET', '/api/v1/pools/' + encodeURIComponent(id));
  return origin + ':' + pool.name;
}
`;

/** The TypeScript the test compiles: type-level assertions over the generated `paths`, and the client. */
function checkSource(doc: Doc, dir: string): string {
  const lines = ["import type { components, operations } from './api.js';"];
  const byFile = new Map<string, Set<string>>();
  for (const d of DECLARED) byFile.set(d.file, (byFile.get(d.file) ?? new Set()).add(d.type));
  for (const [file, types] of byFile) {
    lines.push(`import type { ${[...types].join(', ')} } from '${relative(dir, join(PACKAGE_ROOT, file)).replace(/\.ts$/, '.js')}';`);
  }
  lines.push(HELPERS);
  for (const { op } of operationsOf(doc)) {
    if (op.operationId === undefined) continue;
    for (const [status, r] of Object.entries(op.responses ?? {})) {
      if (!/^2\d\d$/.test(status) || !r.content?.['application/json']) continue;
      lines.push(`export type ${op.operationId!}_${status} = Assert<Known<operations['${op.operationId!}']['responses'][${status}]['content']['application/json']>>;`);
    }
  }
  for (const d of DECLARED) {
    const generated = d.part === 'body' ? `Body<operations['${d.op}']>` : `NonNullable<operations['${d.op}']['parameters']['${d.part}']>`;
    lines.push(`export type ${d.op}_${d.part}_is_${d.type} = Assert<Agree<${generated}, ${d.type}>>;`);
  }
  lines.push(CLIENT);
  return lines.join('\n');
}

test('OpenAPI document: operation ids, 401/403 on every non-public operation, references that resolve, and a generated client that compiles', async () => {
  const d = await startTestDaemon({}, {}, { ports: { demo: { backends: [{ name: 'demo-1', host: '127.0.0.1', port: 0 }] } } });
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-openapi-'));
  try {
    const res = await api(d.url, 'GET', '/api/v1/openapi.json');
    assert.equal(res.status, 200);
    const doc = res.body as Doc;
    const ops = operationsOf(doc);
    assert.ok(ops.length > 30, `only ${ops.length} operations`);

    // every finding is collected, so one run lists them all
    const problems: string[] = [];
    const expectNone = (what: string, list: string[]) => { if (list.length) problems.push(`${what}:\n  ${list.join('\n  ')}`); };
    const ids = ops.map((o) => o.op.operationId).filter((id) => id !== undefined);
    // the form service's /public/v1 keeps the operation ids its spec names (forms-api.md §4: `get_form_id`)
    const isForms = (o: { path: string }) => o.path.startsWith('/public/v1/');
    const idsOf = (list: typeof ops) => list.map((o) => o.op.operationId).filter((id) => id !== undefined);
    expectNone('operations without an operationId', ops.filter((o) => !o.op.operationId).map((o) => `${o.method} ${o.path}`));
    expectNone('operationIds used twice', ids.filter((id, i) => ids.indexOf(id) !== i));
    expectNone('operationIds not in camelCase', idsOf(ops.filter((o) => !isForms(o))).filter((id) => !/^[a-z][A-Za-z0-9]*$/.test(id)));
    expectNone('/public/v1 operationIds not in snake_case', idsOf(ops.filter(isForms)).filter((id) => !/^[a-z][a-z0-9_]*$/.test(id)));

    const routes = d.core.ports.routes ?? [];
    // public: declared so, or a route that authenticates by itself (ownAuth) and documents that it needs no credentials (the form endpoint /f/)
    const isPublic = (o: { method: string; path: string; op: Operation }) => {
      const r = routes.find((x) => x.method === o.method.toUpperCase() && x.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}') === o.path);
      return r?.public === true || (r?.ownAuth === true && Array.isArray(o.op.security) && o.op.security.length === 0);
    };
    expectNone('non-public operations that do not document 401 and 403', ops.filter((o) => !isPublic(o) && !(o.op.responses?.['401'] && o.op.responses['403'])).map((o) => `${o.method} ${o.path}`));
    // success: 2xx, a redirect (sign-in flows) or 101 (the WebSocket upgrade)
    expectNone('operations without a success response', ops.filter((o) => !Object.keys(o.op.responses ?? {}).some((s) => /^(2\d\d|3\d\d|101)$/.test(s))).map((o) => `${o.method} ${o.path}`));
    expectNone('2xx responses (other than 204) without a body schema', ops.flatMap((o) => Object.entries(o.op.responses ?? {})
      .filter(([s, r]) => /^2\d\d$/.test(s) && s !== '204' && !r.content)
      .map(([s]) => `${o.method} ${o.path} ${s}`)));
    expectNone('references that do not resolve inside the document', refsOf(doc).filter((r) => !r.startsWith('#/components/schemas/') || !(r.slice('#/components/schemas/'.length) in doc.components.schemas)));

    writeFileSync(join(dir, 'api.ts'), astToString(await openapiTS(doc as never)));
    const source = checkSource(doc, dir);
    writeFileSync(join(dir, 'check.ts'), source);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, typeRoots: [join(PACKAGE_ROOT, 'node_modules', '@types')], types: ['node'] },
      files: ['check.ts'],
    }));
    const tsc = join(PACKAGE_ROOT, 'node_modules', '.bin', 'tsc');
    const out = await promisify(execFile)(tsc, ['-p', join(dir, 'tsconfig.json')], { cwd: dir }).then(() => '', (err: { stdout?: string; code?: number }) => `exit ${err.code ?? '?'}\n${err.stdout ?? ''}`);
    // each error on check.ts quotes the assertion it is about
    const quoted = out.replace(/^check\.ts\((\d+),\d+\).*$/gm, (line, n: string) => `${line}\n    ${source.split('\n')[Number(n) - 1] ?? ''}`);
    if (out) problems.push(`tsc on the generated types and client failed:\n${quoted}`);
    assert.ok(problems.length === 0, `the OpenAPI document:\n${problems.join('\n')}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await d.stop();
  }
});
