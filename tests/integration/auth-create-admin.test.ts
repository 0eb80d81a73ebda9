import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';

// Drives `gslbd --create-admin` through a real pseudo-terminal: answers each prompt when it
// appears, and prints a JSON summary {code, output} (the output is what the terminal showed).
const DRIVER = String.raw`
import json, os, pty, select, sys, time
argv, answers = json.loads(sys.argv[1]), json.loads(sys.argv[2])
pid, fd = pty.fork()
if pid == 0:
    os.execvp(argv[0], argv)
out, i, deadline = b"", 0, time.time() + 60
while time.time() < deadline:
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    if i < len(answers) and out.rstrip().endswith(answers[i][0].encode()):
        time.sleep(0.05)
        os.write(fd, answers[i][1].encode() + b"\r")
        i += 1
_, status = os.waitpid(pid, 0)
print(json.dumps({"code": os.waitstatus_to_exitcode(status), "output": out.decode("utf8", "replace")}))
`;

function runCreateAdmin(config: string, answers: [string, string][]): Promise<{ code: number; output: string }> {
  const argv = [process.execPath, '--import', 'tsx', 'runtime/main.ts', '--config', config, '--create-admin'];
  return new Promise((resolve, reject) => {
    const p = spawn('python3', ['-c', DRIVER, JSON.stringify(argv), JSON.stringify(answers)], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    const timer = setTimeout(() => p.kill('SIGKILL'), 80_000);
    p.on('close', () => { clearTimeout(timer); try { resolve(JSON.parse(out)); } catch (err) { reject(new Error(`driver output: ${out} (${String(err)})`)); } });
  });
}

test('gslbd --create-admin prompts on a terminal without echoing the password, then refuses a second time', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-create-admin-'));
  try {
    const db = join(dir, 'gslbd.db');
    const config = join(dir, 'config.yaml');
    writeFileSync(config, `database:\n  path: ${db}\nauth:\n  bcryptCost: 10\n`);
    const password = 'Pty-Secret-Pass-42';
    const first = await runCreateAdmin(config, [['E-mail:', 'ops@example.test'], ['Password:', password], ['Repeat password:', password]]);
    assert.equal(first.code, 0, first.output);
    assert.match(first.output, /E-mail: ops@example\.test/, 'the e-mail is echoed');
    assert.ok(!first.output.includes(password), 'the password is never echoed');
    assert.match(first.output, /created tenant_admin ops@example\.test \([0-9a-f-]{36}\) in tenant default/);
    const sql = new Database(db, { readonly: true });
    // a normal `user` row written by a plan: origin api, an api revision recorded in `revisions`
    const rows = sql.prepare(`SELECT json_extract(data, '$.email') AS email, json_extract(data, '$.role') AS role, tenant_id,
      json_extract(data, '$.passwordHash') AS password_hash, json_extract(data, '$.authProvider') AS auth_provider, origin, revision
      FROM resources WHERE kind = 'user'`).all() as Record<string, string>[];
    const revisions = sql.prepare("SELECT revision FROM revisions WHERE origin = 'api'").all() as { revision: string }[];
    sql.close();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.email, 'ops@example.test');
    assert.equal(rows[0]!.origin, 'api');
    assert.match(rows[0]!.revision!, /^api:/);
    assert.deepEqual(revisions.map((r) => r.revision), [rows[0]!.revision]);
    assert.equal(rows[0]!.role, 'tenant_admin');
    assert.equal(rows[0]!.tenant_id, 'default');
    assert.equal(rows[0]!.auth_provider, 'password');
    assert.match(rows[0]!.password_hash!, /^\$2[aby]\$10\$/);
    const bcrypt = (await import('bcrypt')).default;
    assert.ok(await bcrypt.compare(password, rows[0]!.password_hash!));

    // a user exists: exits at once, before any prompt
    const second = await runCreateAdmin(config, []);
    assert.equal(second.code, 1);
    assert.match(second.output, /a user already exists/);
    assert.ok(!second.output.includes('E-mail:'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('gslbd --create-admin refuses mismatched passwords and creates nobody', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-create-admin-'));
  try {
    const db = join(dir, 'gslbd.db');
    const config = join(dir, 'config.yaml');
    writeFileSync(config, `database:\n  path: ${db}\nauth:\n  bcryptCost: 10\n`);
    const r = await runCreateAdmin(config, [['E-mail:', 'a@example.test'], ['Password:', 'first-pass-1'], ['Repeat password:', 'other-pass-2']]);
    assert.equal(r.code, 1);
    assert.match(r.output, /passwords do not match/);
    const sql = new Database(db, { readonly: true });
    assert.equal((sql.prepare("SELECT count(*) AS n FROM resources WHERE kind = 'user'").get() as { n: number }).n, 0);
    sql.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('gslbd --create-admin with config sync on queues the user plan in the cluster outbox (answers from a pipe)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-create-admin-'));
  try {
    const db = join(dir, 'gslbd.db');
    const config = join(dir, 'config.yaml');
    // no NATS server is needed: the command only writes the database; the daemon publishes later
    writeFileSync(config, `database:\n  path: ${db}\nauth:\n  bcryptCost: 10\nnode:\n  id: n1\nstate:\n  enableConfigSync: true\n  nats:\n    servers: ["nats://127.0.0.1:1"]\n`);
    const p = spawn(process.execPath, ['--import', 'tsx', 'runtime/main.ts', '--config', config, '--create-admin'], { cwd: process.cwd(), stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    p.stderr.on('data', (c: Buffer) => { out += c.toString(); });
    p.stdin.end('piped@example.test\npiped-pass-123\npiped-pass-123\n');
    const code = await new Promise<number | null>((r) => p.on('close', r));
    assert.equal(code, 0, out);
    const sql = new Database(db, { readonly: true });
    const user = sql.prepare("SELECT id, revision FROM resources WHERE kind = 'user'").get() as { id: string; revision: string };
    const outbox = sql.prepare('SELECT revision, body FROM cluster_outbox').all() as { revision: string; body: string }[];
    sql.close();
    assert.equal(outbox.length, 1);
    assert.equal(outbox[0]!.revision, user.revision);
    const msg = JSON.parse(outbox[0]!.body) as { node: string; plan: { origin: string; changes: { op: string; kind: string; id: string }[] } };
    assert.equal(msg.node, 'n1');
    assert.equal(msg.plan.origin, 'api');
    assert.deepEqual(msg.plan.changes.map((c) => [c.op, c.kind, c.id]), [['create', 'user', user.id]]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
