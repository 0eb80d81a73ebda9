import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestDaemon, api, type TestDaemon } from '../helpers/daemon.js';
import { makeGpgIdentity, TestRepo, type GpgIdentity } from '../helpers/git-repo.js';
import { runEntry, waitFor } from '../helpers/proc.js';
import type { GitOpsStatus } from '../../gitops/status.js';

type Status = GitOpsStatus & { recentRejections: unknown[] };

/** GET /gitops/status until `failures` reaches `n` (polls come from the daemon's own loop). */
async function untilFailures(d: TestDaemon, n: number): Promise<Status> {
  return waitFor(async () => {
    const s = (await api(d.url, 'GET', '/api/v1/gitops/status')).body as Status;
    return s.failures >= n ? s : undefined;
  }, 20_000, 100);
}

/**
 * Status over time while the repo cannot be used: every poll advances failures, lastAttemptAt and
 * lastError, failingSince keeps the start of the run, and `gslbctl status` says how long.
 */
describe('gitops status while failing or stalled, over two polls', () => {
  const root = mkdtempSync(join(tmpdir(), 'gslbd-status-'));
  let ops: GpgIdentity;
  after(() => { ops?.destroy(); rmSync(root, { recursive: true, force: true }); });
  before(() => { ops = makeGpgIdentity('Ops Engineer <ops@example.test>'); });

  const rows: { name: string; reason: string; errorClass: string; label: RegExp; gitops: () => Record<string, unknown> }[] = [
    {
      name: 'a repo that cannot be fetched (transient, retried)',
      reason: 'FetchFailed', errorClass: 'transient', label: /^Failing for \d+s since \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/m,
      gitops: () => ({ repoURL: join(root, 'no-such-repo.git'), pollInterval: '1s', requireSignature: false }),
    },
    {
      name: 'an unsigned head (stalled: the same head is refused again each poll)',
      reason: 'SignatureMissing', errorClass: 'stalled', label: /^Stalled for \d+s since \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/m,
      gitops: () => {
        const repo = new TestRepo(join(root, 'unsigned'));
        repo.write('pools/eu.yaml', 'apiVersion: gslb/v1\nkind: Pool\nmetadata: {name: eu}\nspec: {members: [{ipAddress: 192.0.2.10, port: 80}]}\n');
        repo.commit('unsigned change');
        const keyringFile = join(root, 'keyring.asc');
        writeFileSync(keyringFile, ops.armoredPublicKey);
        return { repoURL: repo.dir, pollInterval: '1s', requireSignature: true, keyringFile, allowedSigners: [ops.fingerprint] };
      },
    },
  ];

  for (const r of rows) {
    it(r.name, async () => {
      const d = await startTestDaemon({ gitops: r.gitops() });
      try {
        const first = await untilFailures(d, 1);
        const second = await untilFailures(d, 2);
        for (const s of [first, second]) {
          assert.equal(s.ready, false);
          assert.equal(s.reason, r.reason, s.message);
          assert.equal(s.errorClass, r.errorClass);
          assert.equal(s.lastError?.reason, r.reason);
          assert.equal(s.lastError?.at, s.lastAttemptAt, 'lastError is the latest attempt');
        }
        assert.ok(second.lastAttemptAt! > first.lastAttemptAt!, 'lastAttemptAt advances every poll');
        assert.ok(second.lastError!.at > first.lastError!.at, 'lastError is refreshed every poll');
        assert.equal(second.failingSince, first.failingSince, 'failingSince keeps the start of the run');
        assert.ok(first.failingSince! <= first.lastAttemptAt!);
        // a stalled head is recorded (and announced) once, not on every poll
        if (r.errorClass === 'stalled') assert.equal(second.recentRejections.length, 1);

        const cli = await runEntry('gslbctl', ['status', '--server', d.url], { NO_COLOR: '1' });
        assert.equal(cli.code, 1, `not ready exits 1: ${cli.stderr}`);
        assert.match(cli.stdout, r.label);
        assert.match(cli.stdout, new RegExp(`^Last error: +\\d{4}-\\S+ \\S+ ${r.reason}: `, 'm'));
        assert.match(cli.stdout, /\(\d+ consecutive failures\)/);
      } finally {
        await d.stop();
      }
    });
  }
});
