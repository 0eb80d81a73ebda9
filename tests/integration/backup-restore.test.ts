import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, startTestDaemon } from '../helpers/daemon.js';
import { dig, makeService } from '../helpers/dns-tools.js';
import { runEntry } from '../helpers/proc.js';

test('gslbctl restore: a backup of node A restored into node B serves the same pools, services and DNS answers; refused while B runs and for a corrupt file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-restore-'));
  const bDb = join(dir, 'b', 'gslbd.db');
  const bCfg = join(dir, 'b.yaml');
  writeFileSync(bCfg, `node: {id: node-b}\ndatabase:\n  path: ${bDb}\n`);
  const restore = (file: string, ...extra: string[]) => runEntry('gslbctl', ['restore', file, '--config', bCfg, ...extra]);
  const a = await startTestDaemon();
  let b: Awaited<ReturnType<typeof startTestDaemon>> | undefined;
  try {
    // node A: rows over REST, then a backup over REST (what `gslbctl backup` calls)
    await makeService(a, { name: 'web', domain: 'www.restore.test.', ttl: 90 }, [{ ipAddress: '192.0.2.7' }, { ipAddress: '192.0.2.8', weight: 3 }]);
    await makeService(a, { name: 'api', domain: 'api.restore.test.' }, [{ ipAddress: '198.51.100.4' }]);
    const ctl = await runEntry('gslbctl', ['backup', '--server', a.url, '-o', 'json']);
    assert.equal(ctl.code, 0, ctl.stderr);
    const taken = JSON.parse(ctl.stdout) as { file: string; dir: string; size: number };
    const backup = join(dir, taken.file);
    copyFileSync(join(taken.dir, taken.file), backup);
    const want = { pools: (await api(a.url, 'GET', '/api/v1/pools')).body, services: (await api(a.url, 'GET', '/api/v1/services')).body };
    assert.equal(want.services.length, 2);

    // node B runs (a fresh database): refused, nothing changed
    mkdirSync(join(dir, 'b'));
    b = await startTestDaemon({ database: { path: bDb } });
    const busy = await restore(backup);
    assert.equal(busy.code, 2, busy.stdout + busy.stderr);
    assert.match(busy.stderr, /gslbctl restore: refused, nothing changed: .*gslbd\.db is in use: a running gslbd .*stop the daemon first/);
    assert.deepEqual((await api(b.url, 'GET', '/api/v1/services')).body, []);
    await b.stop();
    b = undefined;

    // a corrupt file and a missing one: refused, the stopped node's database untouched
    const before = readFileSync(bDb);
    const corrupt = join(dir, 'corrupt.db');
    writeFileSync(corrupt, readFileSync(backup).subarray(0, 100));
    const bad = await restore(corrupt);
    assert.equal(bad.code, 2, bad.stdout + bad.stderr);
    assert.match(bad.stderr, /refused, nothing changed: .*corrupt\.db (is not a readable SQLite database|fails PRAGMA integrity_check)/);
    const missing = await restore(join(dir, 'nope.db'));
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /cannot read .*nope\.db: ENOENT/);
    assert.deepEqual(readFileSync(bDb), before);

    // stopped: restored, the old database kept aside, no -wal/-shm of it left
    const ok = await restore(backup);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, new RegExp(`restored .*${taken.file} into ${bDb.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(schema version \\d+\\)`));
    assert.match(ok.stdout, /the previous database is kept as .*gslbd\.db\.pre-restore-\d{8}T\d{6}/);
    const names = readdirSync(join(dir, 'b'));
    assert.ok(names.some((n) => /^gslbd\.db\.pre-restore-\d{8}T\d{6}$/.test(n)), names.join(' '));
    assert.ok(!existsSync(`${bDb}-wal`) && !existsSync(`${bDb}-shm`));

    // node B starts on it: the same rows over REST and the same answers over DNS
    b = await startTestDaemon({ database: { path: bDb } });
    assert.deepEqual((await api(b.url, 'GET', '/api/v1/pools')).body, want.pools);
    assert.deepEqual((await api(b.url, 'GET', '/api/v1/services')).body, want.services);
    const port = b.ports.dnsPort!;
    const web = await dig(port, ['www.restore.test', 'A']);
    assert.equal(web.status, 'NOERROR');
    assert.deepEqual([...web.answers].sort(), ['192.0.2.7', '192.0.2.8']);
    assert.match(web.text, /www\.restore\.test\.\s+90\s+IN\s+A/);
    assert.deepEqual((await dig(port, ['api.restore.test', 'A'])).answers, ['198.51.100.4']);
    assert.deepEqual((await dig(a.ports.dnsPort!, ['api.restore.test', 'A'])).answers, ['198.51.100.4']);
  } finally {
    await b?.stop();
    await a.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
