// test-timeout: 300000
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { createHmac } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BashSession, docBlock, readmeBlock } from '../helpers/bash-session.js';
import { refreshDist } from '../helpers/build-dist.js';
import { dig } from '../helpers/dns-tools.js';
import { waitFor } from '../helpers/proc.js';

// The README's quick start and GitOps walk-through, and the forms quick start
// (docs/forms-quickstart.md), run exactly as written (the blocks marked `<!-- test: … -->`) by bash
// in the checkout, on the fixed loopback ports the README uses, so all three live in this one file
// (files run in parallel; these must not). They must stay green: a minute
// after the walk-through's gslbd starts, DNS still answers with healthy members. The quick start is
// watched for several check intervals before its failover block stops a backend.

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
const API = 'http://127.0.0.1:8080/api/v1';
const STAY_GREEN_MS = 60_000;
const QUICKSTART_GREEN_MS = 8_000;
const QUICKSTART_DIR = join(homedir(), '.local/state/gslbd-quickstart');
const FORMS_DOC = 'docs/forms-quickstart.md';
/** where the forms quick start's webhook receiver listens (its config opens this address only) */
const RECEIVER = { host: '127.0.0.20', port: 9000 };

/** The shell a person would have: none of the test runner's or a developer's gslbd settings. */
function shellEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of ['GSLB_API_KEY', 'GSLB_SERVER', 'GNUPGHOME', 'NODE_ENV', 'NODE_OPTIONS']) delete env[k];
  return env;
}

/** Fails early, with a reason, when a port the README uses is taken (e.g. a quick start left running). */
async function assertFree(host: string, port: number, proto: 'tcp' | 'udp'): Promise<void> {
  const busy = (err: Error) => new Error(`${proto} ${host}:${port} is in use; the README blocks need it (${err.message})`);
  if (proto === 'udp') {
    const s = createSocket('udp4');
    await new Promise<void>((resolve, reject) => { s.once('error', (e) => reject(busy(e))); s.bind(port, host, () => resolve()); });
    await new Promise<void>((resolve) => s.close(() => resolve()));
    return;
  }
  const s = createServer();
  await new Promise<void>((resolve, reject) => { s.once('error', (e) => reject(busy(e))); s.listen(port, host, () => resolve()); });
  await new Promise<void>((resolve) => s.close(() => resolve()));
}

const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch { return false; } };

/** PIDs of the session's background jobs (what `kill %1` will stop). */
async function jobPids(sh: BashSession): Promise<number[]> {
  const r = await sh.run('jobs -p', 5000);
  return r.output.split('\n').map((l) => Number(l.trim())).filter((n) => n > 0);
}

/** A line of gslbd's text-format log (`[2026-11-28 13:22:06.747 +0000] INFO (7625): …`). */
const isLogLine = (l: string) => /^\[\d{4}-\d{2}-\d{2} [\d:.]+ [+-]\d{4}\] [A-Z]+ \(\d+\): /.test(l);

/** Health flips to unhealthy in a text-format log. */
const downFlips = (log: string) => log.split('\n').filter((l) => l.includes('health flip') && l.includes('"to":"unhealthy"'));

/** One request in the forms quick start's receiver log: its headers and its body, as received. */
interface Hook { id: string; timestamp: string; signature: string; body: string }

/** The receiver log's requests (blocks of `POST /hook`, three header lines, the body, a blank line). */
function parseHooks(log: string): Hook[] {
  return log.split('\n\n').filter((b) => b.startsWith('POST ')).map((b) => {
    const lines = b.split('\n');
    const header = (name: string) => lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2) ?? '';
    return { id: header('webhook-id'), timestamp: header('webhook-timestamp'), signature: header('webhook-signature'), body: lines[4] ?? '' };
  });
}

/** Whether a request carries a valid Standard Webhooks signature made with `secret` (whsec_<base64>). */
function signedWith(h: Hook, secret: string): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const want = `v1,${createHmac('sha256', key).update(`${h.id}.${h.timestamp}.${h.body}`).digest('base64')}`;
  // the receiver appends its own verdict, " (valid)": the header is what precedes it
  return h.signature.split(' ')[0] === want;
}

describe('README quick start, GitOps walk-through and forms quick start, run as written', () => {
  before(async () => {
    // bin/ runs dist/, which `npm ci` builds; bring it up to date with the sources under test
    refreshDist(ROOT);
    for (const port of [5353, 8080, 9090]) await assertFree('127.0.0.1', port, 'tcp');
    await assertFree('127.0.0.1', 5353, 'udp');
    for (const host of ['127.0.0.10', '127.0.0.11']) await assertFree(host, 8081, 'tcp');
    await assertFree(RECEIVER.host, RECEIVER.port, 'tcp');
  });

  it('quick start: the demo answers, stays healthy, fails over and back, takes the API tour, and stops', async () => {
    const hadDir = existsSync(QUICKSTART_DIR);
    const sh = new BashSession(ROOT, shellEnv());
    let pids: number[] = [];
    try {
      const r = await sh.run(readmeBlock(ROOT, 'quickstart'), 45_000);
      assert.equal(r.status, 0, `${r.output}\n${sh.stderr}`);
      assert.match(r.output, /ready: http:\/\/127\.0\.0\.1:8080/);
      assert.match(r.output, /^127\.0\.0\.10$/m);
      assert.match(r.output, /^127\.0\.0\.11$/m);
      assert.match(r.output, /demo-1 at 127\.0\.0\.10:8081/);
      pids = await jobPids(sh);
      assert.equal(pids.length, 1, 'one background job: gslbd');
      // every listener is logged once, in the text format. pino-pretty writes from a worker
      // thread, so the lines may still be on their way when the block has finished
      const listeners = ['api', 'dns udp', 'dns tcp', 'metrics', 'demo demo-1', 'demo demo-2'];
      await waitFor(() => listeners.every((l) => sh.stdout.includes(`"listener":"${l}"`)), 15_000).catch(() => undefined);
      for (const l of listeners) {
        assert.equal(sh.stdout.split('\n').filter((x) => x.includes(`"listener":"${l}"`)).length, 1, `listener ${l}:\n${sh.stdout}`);
      }
      assert.match(sh.stdout, /INFO \(\d+\): listening \{"listener":"api","address":"127\.0\.0\.1:8080"\}/);

      await new Promise((res) => setTimeout(res, QUICKSTART_GREEN_MS));
      const a = await dig(5353, ['gslb.example.test', 'A']);
      assert.equal(a.status, 'NOERROR');
      assert.deepEqual([...a.answers].sort(), ['127.0.0.10', '127.0.0.11'], 'both demo backends are still answered');
      assert.deepEqual(downFlips(sh.stdout), [], 'no endpoint went unhealthy');

      // failover: each wait ends on the answer it names, and the dig after it shows that answer
      const f = await sh.run(readmeBlock(ROOT, 'failover'), 90_000);
      assert.equal(f.status, 0, `${f.output}\n${sh.stderr}`);
      // the daemon's own log lines (its audit of the waits' /simulate calls) reach the terminal from
      // a worker thread, in any order relative to the commands' output: they are not the commands'
      const lines = f.output.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !isLogLine(l));
      // (curl's answers end without a newline, so a wait's line may follow one on the same line)
      const waited = lines.map((l, i) => (l.includes('gslb.example.test answers') ? i : -1)).filter((i) => i >= 0);
      assert.equal(waited.length, 2, f.output);
      assert.match(lines[waited[0]!]!, /gslb\.example\.test answers 127\.0\.0\.11 \(after/);
      assert.deepEqual(lines.slice(waited[0]! + 1, waited[0]! + 2), ['127.0.0.11'], `after the stop only demo-1's peer answers:\n${f.output}`);
      assert.match(lines[waited[1]!]!, /gslb\.example\.test answers 127\.0\.0\.10, 127\.0\.0\.11 \(after/);
      assert.deepEqual(lines.slice(waited[1]! + 1).filter((l) => /^127\./.test(l)).sort(), ['127.0.0.10', '127.0.0.11'], f.output);
      assert.ok(downFlips(sh.stdout).length >= 1, 'the stop was logged as a health flip');

      // the API tour: a pool, a member and a service, answered over DNS
      const t = await sh.run(readmeBlock(ROOT, 'try-api'), 30_000);
      assert.equal(t.status, 0, `${t.output}\n${sh.stderr}`);
      assert.match(t.output, /"ipAddress":"127\.0\.0\.10"/);
      assert.match(t.output, /"domain":"www\.example\.test\."/);
      assert.match(t.output, /^127\.0\.0\.10$/m);

      const stop = await sh.run(readmeBlock(ROOT, 'quickstart-stop'), 10_000);
      assert.equal(stop.status, 0, stop.output);
      await waitFor(() => pids.every((p) => !alive(p)), 15_000);
      await assertFree('127.0.0.1', 8080, 'tcp');
      await assertFree('127.0.0.10', 8081, 'tcp');
    } finally {
      for (const p of pids) if (alive(p)) process.kill(p, 'SIGKILL');
      await sh.close();
      if (!hadDir) rmSync(QUICKSTART_DIR, { recursive: true, force: true });
    }
  });

  it('GitOps walk-through: signed commit applied, unsigned refused, healthy a minute later, all stopped', async () => {
    const sh = new BashSession(ROOT, shellEnv());
    let pids: number[] = [];
    let w = '';
    try {
      const started = Date.now();
      const r = await sh.run(readmeBlock(ROOT, 'gitops'), 60_000);
      w = (await sh.run('echo "$W"', 5000)).output.trim();
      assert.ok(w.startsWith('/'), `W=${w}`);
      pids = await jobPids(sh);
      assert.equal(pids.length, 1, 'one background job: gslbd');
      const out = r.output;
      // the last command is `gslbctl status` of a refused head: exit 1
      assert.equal(r.status, 1, `${out}\n${sh.stderr}`);
      assert.match(out, /examples\/config-repo: valid \(5 files, 6 manifests/);
      assert.match(out, /ready: http:\/\/127\.0\.0\.1:8080/);
      assert.match(out, /Ready:\s+True \(Succeeded\)/);
      const fpr = /signed by ([0-9A-F]{40})/.exec(out)?.[1];
      assert.ok(fpr, out);
      assert.match(out, /\+17 ~0 -0\s+Two regions/);
      assert.match(out, /^127\.0\.0\.10$/m);
      assert.match(out, /Ready:\s+False \(SignatureMissing, stalled\)/);
      assert.match(out, /Recent rejections:[\s\S]*SignatureMissing/);

      // the old example went SERVFAIL about 30 s in: look a minute after the daemon started
      await new Promise((res) => setTimeout(res, Math.max(0, started + STAY_GREEN_MS - Date.now())));
      const a = await dig(5353, ['www.example.test', 'A']);
      assert.equal(a.status, 'NOERROR');
      assert.deepEqual(a.answers, ['127.0.0.10'], 'the primary member, healthy, still answers');
      const pools = await (await fetch(`${API}/pools`)).json() as { id: string; name: string }[];
      for (const p of pools) {
        const members = await (await fetch(`${API}/pools/${p.id}/status`)).json() as { ipAddress: string; healthy: boolean; lastChecked: number }[];
        for (const m of members) {
          assert.equal(m.healthy, true, `${p.name} ${m.ipAddress}`);
          assert.ok(Date.now() - m.lastChecked < 10_000, `${p.name} ${m.ipAddress} is being checked`);
        }
      }
      const status = await (await fetch(`${API}/gitops/status`)).json() as { reason: string; lastSigner: string };
      assert.equal(status.reason, 'SignatureMissing', 'the unsigned head stays refused');
      assert.equal(status.lastSigner, fpr, 'the signed revision keeps serving');
      assert.deepEqual(downFlips(sh.stdout), [], 'no member went unhealthy');
      assert.ok(execFileSync('pgrep', ['-f', `${w}/gnupg`], { encoding: 'utf8' }).trim() !== '', 'signing started a gpg-agent');

      const stop = await sh.run(readmeBlock(ROOT, 'gitops-stop'), 20_000);
      assert.equal(stop.status, 0, stop.output);
      await waitFor(() => pids.every((p) => !alive(p)), 15_000);
      await waitFor(async () => (await run('pgrep', ['-f', `${w}/gnupg`]).then(() => false, () => true)), 10_000);
      assert.equal(existsSync(w), false, 'the walk-through directory is removed');
      await assertFree('127.0.0.1', 8080, 'tcp');
    } finally {
      for (const p of pids) if (alive(p)) process.kill(p, 'SIGKILL');
      if (w && existsSync(`${w}/gnupg`)) await run('gpgconf', ['--homedir', `${w}/gnupg`, '--kill', 'gpg-agent']).catch(() => undefined);
      await sh.close();
      if (w) rmSync(w, { recursive: true, force: true });
    }
  });

  it('forms quick start: a key, a form, a signed webhook, posts, deliveries, the list and a claim, all stopped', async () => {
    const sh = new BashSession(ROOT, shellEnv());
    let pids: number[] = [];
    let f = '';
    const block = (name: string, timeoutMs: number) => sh.run(docBlock(ROOT, FORMS_DOC, name), timeoutMs);
    const shellVar = async (name: string) => (await sh.run(`echo "$${name}"`, 5000)).output.trim();
    try {
      const start = await block('forms-start', 45_000);
      assert.equal(start.status, 0, `${start.output}\n${sh.stderr}`);
      assert.match(start.output, /ready: http:\/\/127\.0\.0\.1:8080/);
      f = await shellVar('F');
      assert.ok(f.startsWith('/') && existsSync(`${f}/gslbd.yaml`), `F=${f}`);
      pids = await jobPids(sh);
      assert.equal(pids.length, 1, 'one background job: gslbd');

      // 1. the key: printed once by gslbctl, listed with its scopes, and it authenticates
      const key = await block('forms-key', 30_000);
      assert.equal(key.status, 0, `${key.output}\n${sh.stderr}`);
      const secretKey = await shellVar('KEY');
      assert.match(secretKey, /^gslbf_[A-Za-z0-9_-]{43}$/);
      assert.match(key.output, /website\s+forms:read,forms:write,submissions:read/);
      const keys = await (await fetch(`${API}/apikeys`)).json() as { name: string; scopes: string[] }[];
      assert.deepEqual(keys.map((k) => [k.name, k.scopes]), [['website', ['forms:read', 'forms:write', 'submissions:read']]]);
      const auth = { authorization: `Bearer ${secretKey}` };

      // 2. the form: 201, its id, and it is there under the key
      const form = await block('forms-form', 30_000);
      assert.equal(form.status, 0, `${form.output}\n${sh.stderr}`);
      assert.match(form.output, /^201$/m);
      const formId = await shellVar('FORM');
      assert.match(formId, /^[0-9a-f-]{36}$/);
      assert.ok(form.output.includes(formId), form.output);
      const shown = await fetch(`http://127.0.0.1:8080/public/v1/form/${formId}`, { headers: auth });
      assert.equal(shown.status, 200);
      assert.equal((await shown.json() as { name: string }).name, 'Contact us');

      // 3. the webhook action (201, a generated signing secret) and the receiver, listening
      const hook = await block('forms-webhook', 60_000);
      assert.equal(hook.status, 0, `${hook.output}\n${sh.stderr}`);
      assert.match(hook.output, /^201$/m);
      assert.match(hook.output, /^ok$/m);
      const secret = await shellVar('SECRET');
      assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      const actionId = await shellVar('ACTION');
      pids = await jobPids(sh);
      assert.equal(pids.length, 2, 'two background jobs: gslbd and the receiver');

      // 4. a browser's post is sent to the thank-you page, a fetch post gets JSON
      const post = await block('forms-post', 30_000);
      assert.equal(post.status, 0, `${post.output}\n${sh.stderr}`);
      assert.match(post.output, new RegExp(`^303 http://localhost:8080/f/${formId}/thanks$`, 'm'));
      assert.ok(post.output.includes(`{"ok":true,"next":"http://localhost:8080/f/${formId}/thanks"}`), post.output);

      // 5. the receiver got both, signed with the secret; the delivery log says sent
      const dlv = await block('forms-deliveries', 60_000);
      assert.equal(dlv.status, 0, `${dlv.output}\n${sh.stderr}`);
      const created = parseHooks(readFileSync(`${f}/hooks.log`, 'utf8'));
      assert.equal(created.length, 2, dlv.output);
      for (const h of created) {
        assert.ok(signedWith(h, secret), `signature of ${h.id}: ${h.signature}`);
        assert.match(h.signature, / \(valid\)$/, 'the receiver checked it too');
      }
      const events = created.map((h) => JSON.parse(h.body) as { type: string; data: { form: { id: string }; submission: { id: number; data: Record<string, string> } } });
      assert.deepEqual(events.map((e) => e.type), ['submission.created', 'submission.created']);
      assert.ok(events.every((e) => e.data.form.id === formId));
      assert.deepEqual(events.map((e) => e.data.submission.data.email).sort(), ['ada@example.com', 'grace@example.com']);
      assert.deepEqual(events.find((e) => e.data.submission.data.email === 'ada@example.com')?.data.submission.data,
        { email: 'ada@example.com', message: 'Hello from a page' }, 'the url-encoded post, decoded');
      assert.match(dlv.output, /^2 submission\.created sent attempts=1 status=200$/m);
      assert.match(dlv.output, /^1 submission\.created sent attempts=1 status=200$/m);

      // 6. both listed, the first claimed once (200, then 409), the claim delivered signed
      const list = await block('forms-list', 60_000);
      assert.equal(list.status, 0, `${list.output}\n${sh.stderr}`);
      assert.match(list.output, /^2 grace@example\.com claimed=false\n1 ada@example\.com claimed=false$/m);
      assert.match(list.output, /^200$/m);
      assert.match(list.output, /"name":"conflict","message":"submission 1 was claimed by sam@example\.com at /);
      const subs = await (await fetch(`http://127.0.0.1:8080/public/v1/form/${formId}/submission`, { headers: auth })).json() as { data: { id: number; claimed: boolean; claimed_by: string | null }[] };
      assert.deepEqual(subs.data.map((s) => [s.id, s.claimed, s.claimed_by]), [[2, false, null], [1, true, 'sam@example.com']]);
      const all = parseHooks(readFileSync(`${f}/hooks.log`, 'utf8'));
      assert.equal(all.length, 3);
      const claim = all[2]!;
      assert.ok(signedWith(claim, secret), claim.signature);
      const claimed = JSON.parse(claim.body) as { type: string; data: { submission: { id: number; claimed_by: string } } };
      assert.equal(claimed.type, 'submission.claimed');
      assert.deepEqual([claimed.data.submission.id, claimed.data.submission.claimed_by], [1, 'sam@example.com']);
      assert.ok(list.output.includes('"type":"submission.claimed"'), list.output);
      const log = await (await fetch(`http://127.0.0.1:8080/public/v1/action/${actionId}/deliveries`, { headers: auth })).json() as { data: { state: string }[] };
      assert.equal(log.data.length, 3);

      // 7. everything it started stops, its directory is gone, the ports are free
      const stop = await block('forms-stop', 30_000);
      assert.equal(stop.status, 0, `${stop.output}\n${sh.stderr}`);
      await waitFor(() => pids.every((p) => !alive(p)), 15_000);
      assert.equal(existsSync(f), false, 'the walk-through directory is removed');
      await assertFree('127.0.0.1', 8080, 'tcp');
      await assertFree(RECEIVER.host, RECEIVER.port, 'tcp');
    } finally {
      for (const p of pids) if (alive(p)) process.kill(p, 'SIGKILL');
      await sh.close();
      if (f) rmSync(f, { recursive: true, force: true });
    }
  });
});
