import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { api, startTestDaemon } from '../helpers/daemon.js';
import { makeService } from '../helpers/dns-tools.js';
import { waitFor } from '../helpers/proc.js';
import { BACKUP_NAME, listBackups } from '../../runtime/backup/names.js';

const run = promisify(execFile);

/** `sqlite3 -readonly FILE SQL` (the Debian sqlite3 CLI): its stdout, trimmed. */
async function sqlite3(file: string, sql: string): Promise<string> {
  const { stdout } = await run('sqlite3', ['-readonly', file, sql], { timeout: 30_000 });
  return stdout.trim();
}

interface Perf { sent: number; completed: number; lost: number; interrupted: number; raw: string }

/**
 * dnsperf at a bounded rate until `stop()` (SIGINT: it stops sending and prints its statistics, the
 * queries still in flight counted as interrupted), or for `seconds` at most; killed 20 s past that.
 */
function dnsperf(port: number, file: string, seconds: number, qps: number): { stop: () => void; done: Promise<Perf> } {
  const p = spawn('dnsperf', ['-s', '127.0.0.1', '-p', String(port), '-d', file, '-l', String(seconds), '-Q', String(qps), '-t', '2', '-q', '50'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const done = new Promise<Perf>((resolve, reject) => {
    let raw = '';
    p.stdout.on('data', (c: Buffer) => { raw += c.toString(); });
    p.stderr.on('data', (c: Buffer) => { raw += c.toString(); });
    const killer = setTimeout(() => p.kill('SIGKILL'), (seconds + 20) * 1000);
    p.on('error', reject);
    p.on('close', () => {
      clearTimeout(killer);
      const num = (re: RegExp) => Number(re.exec(raw)?.[1] ?? 0);
      if (!/Queries sent:\s+\d+/.test(raw)) return reject(new Error(`dnsperf output not understood:\n${raw}`));
      resolve({ sent: num(/Queries sent:\s+(\d+)/), completed: num(/Queries completed:\s+(\d+)/), lost: num(/Queries lost:\s+(\d+)/), interrupted: num(/Queries interrupted:\s+(\d+)/), raw });
    });
  });
  return { stop: () => { p.kill('SIGINT'); }, done };
}

test('backups while dnsperf queries the daemon: no query lost; each file opens in sqlite3 and passes integrity_check; names, rotation, the interval; a failure is logged and counted', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-backups-'));
  const out = join(dir, 'backups');
  const d = await startTestDaemon({ backup: { enabled: true, dir: out, interval: '1s', keep: 3 } });
  try {
    // files in the folder that are not backups: never counted or deleted
    writeFileSync(join(out, 'gslbd-manual.db'), 'kept');
    writeFileSync(join(out, 'notes.txt'), 'kept');
    await makeService(d, { name: 'web', domain: 'www.backup.test.' }, [{ ipAddress: '192.0.2.1' }, { ipAddress: '192.0.2.2' }]);
    // ballast, so one copy takes many steps of 100 pages (about 8 MB, 2000 pages)
    d.core.db.exec('CREATE TABLE ballast (id INTEGER PRIMARY KEY, body BLOB)');
    const ins = d.core.db.prepare('INSERT INTO ballast (body) VALUES (randomblob(4000))');
    d.core.db.transaction(() => { for (let i = 0; i < 2000; i++) ins.run(); })();

    const queries = join(dir, 'queries.txt');
    writeFileSync(queries, 'www.backup.test A\n'.repeat(50));
    const perfStart = Date.now();
    // queries flow from before the first backup until every check of the backups is done
    const perf = dnsperf(d.ports.dnsPort!, queries, 300, 1500);
    // on-demand backups while the queries run (the schedule keeps taking its own, one at a time)
    await new Promise((r) => setTimeout(r, 500));
    const taken: { file: string; size: number; createdAt: number }[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await api(d.url, 'POST', '/api/v1/system/backup');
      assert.equal(r.status, 201, JSON.stringify(r.body));
      taken.push(r.body);
    }
    // the newest on-demand backup, copied at once (keep 3: the schedule rotates it out only after
    // three more backups) and read by the real sqlite3 CLI
    const last = taken.at(-1)!;
    assert.match(last.file, BACKUP_NAME);
    const file = join(dir, 'checked.db');
    copyFileSync(join(out, last.file), file);
    assert.equal(statSync(file).size, last.size);
    assert.equal(await sqlite3(file, 'PRAGMA integrity_check;'), 'ok');
    assert.equal(await sqlite3(file, 'SELECT count(*) FROM ballast;'), '2000');
    assert.equal(await sqlite3(file, "SELECT count(*) FROM resources WHERE kind IN ('pool', 'member', 'service');"), '4');
    assert.equal(await sqlite3(file, 'PRAGMA journal_mode;'), 'delete');
    perf.stop();
    const p = await perf.done;
    assert.ok(p.sent > 0, `dnsperf sent nothing:\n${p.raw}`);
    assert.equal(p.lost, 0, p.raw);
    assert.equal(p.completed + p.interrupted, p.sent, p.raw);
    assert.ok(taken.every((t) => t.createdAt * 1000 >= perfStart - 1000), 'the backups were taken during the run');
    assert.equal(new Set(taken.map((t) => t.file)).size, 3, 'one file per request, even within one second');

    // the schedule alone keeps producing files (logged with trigger "schedule")
    const scheduled = () => d.logs.lines.filter((l) => l.msg === 'backup taken' && l.trigger === 'schedule').length;
    const before = scheduled();
    await waitFor(() => scheduled() >= before + 2, 15_000);
    // every file in the folder: a backup name, sound, and at most `keep` of them
    await d.core.ports.takeBackup!(); // the rotation after this one has run when it resolves
    const files = listBackups(out);
    assert.ok(files.length >= 1 && files.length <= 3, files.join(' '));
    for (const f of files) assert.equal(await sqlite3(join(out, f), 'PRAGMA integrity_check;'), 'ok', f);
    assert.deepEqual(readdirSync(out).filter((n) => !files.includes(n)).sort(), ['gslbd-manual.db', 'notes.txt']);
    const metrics = await d.core.metrics.metrics();
    const ok = Number(/gslbd_backups_total\{result="ok"[^}]*\} (\d+)/.exec(metrics)?.[1]);
    assert.ok(ok >= 6, `gslbd_backups_total ok = ${ok}`);

    // the folder goes away and a file takes its place: backups fail, are logged and counted, the daemon serves on
    rmSync(out, { recursive: true, force: true });
    writeFileSync(out, 'in the way');
    await waitFor(() => d.logs.lines.some((l) => l.msg === 'backup failed' && l.trigger === 'schedule'), 10_000);
    const failed = await api(d.url, 'POST', '/api/v1/system/backup');
    assert.equal(failed.status, 500);
    assert.match(failed.body.error, /cannot create backup\.dir .*backups: (EEXIST|ENOTDIR)/);
    assert.match(await d.core.metrics.metrics(), /gslbd_backups_total\{result="failed"[^}]*\} [1-9]/);
    assert.equal((await api(d.url, 'GET', '/api/v1/health')).body.status, 'ok');
    rmSync(out, { force: true });
  } finally {
    await d.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('backup.enabled with a folder that cannot be made stops startup with a message naming it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-backups-'));
  try {
    writeFileSync(join(dir, 'file'), 'not a folder');
    await assert.rejects(startTestDaemon({ backup: { enabled: true, dir: join(dir, 'file', 'backups') } }), /cannot create backup\.dir .*file\/backups: ENOTDIR/);
  } finally { rmSync(dir, { recursive: true, force: true }); }
});
