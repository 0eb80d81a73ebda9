import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** A throw-away GnuPG home with one key made by the real `gpg`. */
export interface GpgIdentity {
  home: string;
  fingerprint: string;
  /** fingerprint of a signing subkey, when made with `subkey: true` */
  subkeyFingerprint?: string;
  armoredPublicKey: string;
  /** stops the gpg-agent of this home and deletes it */
  destroy: () => void;
}

const gpg = (home: string, args: string[], input?: string) =>
  execFileSync('gpg', ['--batch', '--yes', '--no-tty', '--pinentry-mode', 'loopback', '--passphrase', '', ...args], { env: { ...process.env, GNUPGHOME: home }, input, stdio: ['pipe', 'pipe', 'pipe'] }).toString();

/** Makes a GnuPG home with an ed25519 signing key (and optionally a separate signing subkey). */
export function makeGpgIdentity(uid: string, opts: { subkey?: boolean } = {}): GpgIdentity {
  const home = mkdtempSync(join(tmpdir(), 'g-'));
  gpg(home, ['--quick-gen-key', uid, 'ed25519', 'sign', 'never']);
  const fprs = () => gpg(home, ['--with-colons', '--list-keys', uid]).split('\n').filter((l) => l.startsWith('fpr:')).map((l) => l.split(':')[9]!);
  const fingerprint = fprs()[0]!;
  let subkeyFingerprint: string | undefined;
  if (opts.subkey) {
    gpg(home, ['--quick-add-key', fingerprint, 'ed25519', 'sign', 'never']);
    subkeyFingerprint = fprs()[1];
  }
  const armoredPublicKey = gpg(home, ['--armor', '--export', fingerprint]);
  return {
    home, fingerprint, subkeyFingerprint, armoredPublicKey,
    destroy: () => {
      try { execFileSync('gpgconf', ['--kill', 'gpg-agent'], { env: { ...process.env, GNUPGHOME: home }, stdio: 'ignore' }); } catch { /* agent not running */ }
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/**
 * A working git repository (served as is by git http-backend) where tests write manifests and make
 * commits with the real `git`, signed by a GpgIdentity's key or unsigned.
 */
export class TestRepo {
  readonly dir: string;
  constructor(readonly root: string, readonly name = 'config.git', branch = 'main') {
    this.dir = join(root, name);
    mkdirSync(this.dir, { recursive: true });
    this.git(['init', '-q', '-b', branch]);
    this.git(['config', 'user.name', 'Ops Engineer']);
    this.git(['config', 'user.email', 'ops@example.test']);
    this.git(['config', 'commit.gpgsign', 'false']);
    // let http-backend serve the checked-out branch's repository
    this.git(['config', 'http.receivepack', 'false']);
  }

  git(args: string[], env: NodeJS.ProcessEnv = {}, input?: string): string {
    return execFileSync('git', args, { cwd: this.dir, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', ...env }, input, stdio: ['pipe', 'pipe', 'pipe'] }).toString().trim();
  }

  write(path: string, text: string): this {
    const p = join(this.dir, path);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, text);
    return this;
  }

  remove(path: string): this {
    unlinkSync(join(this.dir, path));
    return this;
  }

  /** Commits everything; signed with `signer`'s key (or `key`, e.g. a subkey `FPR!`) when given. Returns the SHA. */
  commit(message: string, signer?: GpgIdentity, key?: string): string {
    this.git(['add', '-A']);
    const sign = signer ? ['-c', `user.signingkey=${key ?? signer.fingerprint}`, '-c', 'gpg.program=gpg'] : [];
    this.git([...sign, 'commit', '-q', '--allow-empty', ...(signer ? ['-S'] : []), '-m', message], signer ? { GNUPGHOME: signer.home } : {});
    return this.head();
  }

  head(): string {
    return this.git(['rev-parse', 'HEAD']);
  }

  /**
   * Makes a commit whose content differs from a signed one but which carries the original
   * signature (an attacker's edit), moves the branch to it and returns its SHA.
   */
  tamper(sha: string, edit: (raw: string) => string): string {
    const raw = this.git(['cat-file', 'commit', sha]);
    const forged = this.git(['hash-object', '-t', 'commit', '-w', '--stdin'], {}, `${edit(raw)}\n`);
    this.git(['update-ref', 'HEAD', forged]);
    this.git(['reset', '-q', '--hard', forged]);
    return forged;
  }

  /** Moves the branch back to `sha` (history rewind, as a force-push would). */
  resetTo(sha: string): void {
    this.git(['reset', '-q', '--hard', sha]);
    this.git(['clean', '-fdq']);
  }
}
