// Fuzzes the live OpenAPI document (docs/api.md "Fuzzing the document"): `npm run test:api-fuzz`
// [-- --per-op N --seed S --json FILE]. Starts a real daemon (dev mode, temp database, the demo
// backends' routes too), generates requests from the document's own request schemas, sends them
// and checks every answer against the document. Exits 1 on a 5xx, an undocumented status or media
// type, or a response-schema violation.
//
// The daemon acts on what it is sent (health checks probe member addresses, mail settings name
// a server, form domains are looked up): the run re-executes itself in a network namespace of its
// own with only loopback up (`unshare -n`, root), and its generated addresses and URLs are
// loopback ones besides, so nothing leaves this machine.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { api, startTestDaemon } from '../helpers/daemon.js';
import { fuzzApi, formatReport } from './run-fuzz.js';

const { values } = parseArgs({
  options: {
    'per-op': { type: 'string', default: '20' },
    seed: { type: 'string', default: '20261128' },
    json: { type: 'string' },
    quiet: { type: 'boolean', default: false },
  },
});
const perOp = Number(values['per-op']);
const seed = Number(values.seed);
if (!Number.isInteger(perOp) || perOp < 1 || perOp > 1000 || !Number.isInteger(seed)) {
  console.error('usage: api-fuzz.ts [--per-op 1..1000] [--seed N] [--json FILE] [--quiet]');
  process.exit(2);
}

if (process.env.GSLBD_FUZZ_NETNS !== '1') {
  const child = spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up && exec "$@"', 'sh', process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit', env: { ...process.env, GSLBD_FUZZ_NETNS: '1' },
  });
  if (child.error || child.status === null) {
    console.error(`cannot start a network namespace of its own (unshare -n, as root): ${child.error?.message ?? child.signal}; not fuzzing`);
    process.exit(2);
  }
  process.exit(child.status);
}

const log = (line: string) => { if (!values.quiet) console.log(line); };
const t0 = Date.now();
const d = await startTestDaemon(
  // a public URL, so password resets are on; form deliveries off (actions would queue sends)
  { api: { publicURL: 'http://127.0.0.1:8080' }, forms: { rateLimits: { perIpPerMinute: 100_000 }, deliveries: { enabled: false } } } as never,
  {},
  { ports: { demo: { backends: [{ name: 'demo-1', host: '127.0.0.1', port: 0 }] } } },
);
let code = 0;
try {
  const doc: unknown = (await api(d.url, 'GET', '/api/v1/openapi.json')).body;
  // a form-service key for /public/v1, and a form with one submission, so ids exist from the start
  const key = await api(d.url, 'POST', '/api/v1/apikeys', { name: 'fuzz', scopes: ['forms:read', 'forms:write', 'submissions:read'] });
  const auth = { authorization: `Bearer ${key.body.key as string}` };
  const form = await api(d.url, 'POST', '/public/v1/form', { name: 'fuzz' }, auth);
  await api(d.url, 'POST', `/f/${form.body.id as string}`, { name: 'Ada' });
  const subs = await api(d.url, 'GET', `/public/v1/form/${form.body.id as string}/submission`, undefined, auth);
  const ids = [form.body.id as string, ...((subs.body?.data ?? []) as { id: number }[]).map((s) => String(s.id))];
  const report = await fuzzApi({ url: d.url, doc, formKey: key.body.key as string, ids }, perOp, seed, log);
  console.log(`api fuzz: npm run test:api-fuzz -- --per-op ${perOp} --seed ${seed} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  for (const line of formatReport(report)) console.log(line);
  if (values.json) writeFileSync(values.json, JSON.stringify(report, null, 2));
  if (report.serverErrors + report.undocumentedStatus + report.mediaTypeViolations + report.schemaViolations + report.timeouts > 0) code = 1;
} finally {
  // the daemon's own response check saw the same answers; the figures above already report them
  await d.stop().catch(() => undefined);
}
process.exit(code);
