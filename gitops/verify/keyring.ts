import { readFileSync, statSync } from 'node:fs';
import type { PublicKey } from 'openpgp';
import { stalled } from '../errors.js';
import { readKeyring } from './signature.js';

/**
 * The keyring of `gitops.keyringFile`, re-read when the file changes, and the commits whose
 * signature gitops.verifyAll found good under it (forgotten when the file changes).
 */
export class Keyring {
  private keys: { stamp: string; keys: PublicKey[] } | undefined;
  private good: { stamp: string; shas: Set<string> } = { stamp: '', shas: new Set() };

  /** `file`: the keyring file's path now (unset: no keyring) */
  constructor(private readonly file: () => string | undefined) {}

  /** Stamp of the trust inputs: a changed keyring file invalidates cached verdicts. */
  stamp(): string {
    const f = this.file();
    if (!f) return '-';
    try { const st = statSync(f); return `${st.mtimeMs}:${st.size}`; } catch { return 'missing'; }
  }

  /** The parsed keyring. Errors: stalled KeyringInvalid. */
  async read(): Promise<PublicKey[]> {
    const f = this.file();
    if (!f) throw stalled('KeyringInvalid', 'gitops.requireSignature is true but gitops.keyringFile is not set');
    const stamp = this.stamp();
    if (this.keys?.stamp === stamp) return this.keys.keys;
    let text: string;
    try { text = readFileSync(f, 'utf8'); } catch (err) {
      throw stalled('KeyringInvalid', `cannot read gitops.keyringFile ${f}: ${(err as Error).message}`, { cause: err });
    }
    const keys = await readKeyring(text, f);
    this.keys = { stamp, keys };
    return keys;
  }

  /** The commits found good under the keyring as it is now (the set is for adding to). */
  goodCommits(): Set<string> {
    const stamp = this.stamp();
    if (this.good.stamp !== stamp) this.good = { stamp, shas: new Set() };
    return this.good.shas;
  }
}
