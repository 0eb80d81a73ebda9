import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createHmac } from 'node:crypto';
import { startGitHttpServer, type GitHttpServer } from './git-server.js';
import { makeGpgIdentity, TestRepo, type GpgIdentity } from './git-repo.js';

/**
 * A config repo served over smart HTTP by `git http-backend` on loopback, with a trusted signer
 * (`ops`, in the keyring and in allowedSigners) and an untrusted one (`mallory`, in the keyring
 * only). `gitops` is the daemon config block pointing at it.
 */
export interface GitFixture {
  root: string;
  repo: TestRepo;
  server: GitHttpServer;
  ops: GpgIdentity;
  mallory: GpgIdentity;
  keyringFile: string;
  repoURL: string;
  webhookSecret: string;
  gitops: Record<string, unknown>;
  /** copies examples/config-repo (or another folder) into the repo work tree */
  copyTree: (from: string, to?: string) => void;
  /** a signed push-webhook request body and headers for the current head */
  webhook: (style?: 'github' | 'gitea', secret?: string) => { body: string; headers: Record<string, string> };
  close: () => Promise<void>;
}

export async function startGitFixture(opts: { token?: string; gitops?: Record<string, unknown> } = {}): Promise<GitFixture> {
  const root = mkdtempSync(join(tmpdir(), 'gslbd-git-'));
  const ops = makeGpgIdentity('Ops Engineer <ops@example.test>');
  const mallory = makeGpgIdentity('Mallory <mallory@example.test>');
  const keyringFile = join(root, 'keyring.asc');
  writeFileSync(keyringFile, ops.armoredPublicKey + mallory.armoredPublicKey);
  const repo = new TestRepo(join(root, 'srv'));
  const server = await startGitHttpServer(join(root, 'srv'), opts.token ? { token: opts.token } : {});
  const repoURL = `${server.url}/config.git`;
  const webhookSecret = 'test-webhook-secret';
  const copyTree = (from: string, to = '') => {
    const walk = (d: string) => {
      for (const n of readdirSync(d)) {
        const p = join(d, n);
        if (statSync(p).isDirectory()) walk(p);
        else repo.write(join(to, relative(from, p)), readFileSync(p, 'utf8'));
      }
    };
    walk(from);
  };
  return {
    root, repo, server, ops, mallory, keyringFile, repoURL, webhookSecret, copyTree,
    gitops: {
      repoURL, branch: 'main', pollInterval: '1h', requireSignature: true, keyringFile, allowedSigners: [ops.fingerprint],
      webhookSecretEnv: 'GITOPS_WEBHOOK_SECRET', ...opts.gitops,
    },
    webhook(style = 'github', secret = webhookSecret) {
      const body = JSON.stringify({ ref: 'refs/heads/main', before: '0'.repeat(40), after: repo.head(), repository: { full_name: 'ops/config' } });
      const mac = createHmac('sha256', secret).update(body).digest('hex');
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (style === 'github') Object.assign(headers, { 'x-hub-signature-256': `sha256=${mac}`, 'x-github-event': 'push' });
      else Object.assign(headers, { 'x-gitea-signature': mac, 'x-gitea-event': 'push' });
      return { body, headers };
    },
    async close() {
      await server.close();
      ops.destroy();
      mallory.destroy();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
