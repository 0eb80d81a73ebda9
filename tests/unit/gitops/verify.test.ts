import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { parseCommitObject } from '../../../gitops/verify/commit-object.js';
import { readKeyring, signerAllowed, verifyCommitSignature } from '../../../gitops/verify/signature.js';
import { ReconcileError } from '../../../gitops/errors.js';
import { makeGpgIdentity, TestRepo } from '../../helpers/git-repo.js';

// Real peers: commits made and signed by the real `git` with the real `gpg`.
const root = mkdtempSync(join(tmpdir(), 'gslbd-verify-'));
const ops = makeGpgIdentity('Ops <ops@example.test>', { subkey: true });
const mallory = makeGpgIdentity('Mallory <mallory@example.test>');
after(() => { ops.destroy(); mallory.destroy(); rmSync(root, { recursive: true, force: true }); });

const repo = new TestRepo(root);
const raw = (sha: string) => new Uint8Array(execFileSync('git', ['cat-file', 'commit', sha], { cwd: repo.dir }));

async function verdict(sha: string, keyring: string, allowed: string[] = []): Promise<string> {
  try {
    const s = await verifyCommitSignature(parseCommitObject(raw(sha)), await readKeyring(keyring), allowed);
    return `ok ${s.fingerprint}`;
  } catch (err) {
    assert.ok(err instanceof ReconcileError, String(err));
    assert.equal(err.errorClass, 'stalled');
    return err.reason;
  }
}

test('commit object: the payload is the commit without its gpgsig header, byte for byte', () => {
  const sha = repo.write('a.yaml', 'x: 1\n').commit('signed by ops', ops);
  const parts = parseCommitObject(raw(sha));
  assert.ok(parts.signature?.startsWith('-----BEGIN PGP SIGNATURE-----'));
  assert.ok(!parts.payload.toString().includes('gpgsig'));
  // git's own view of the signed payload: the object minus the signature lines
  const stripped = execFileSync('git', ['cat-file', 'commit', sha], { cwd: repo.dir }).toString().split('\n');
  const start = stripped.findIndex((l) => l.startsWith('gpgsig '));
  let end = start + 1;
  while (stripped[end]!.startsWith(' ')) end++;
  stripped.splice(start, end - start);
  assert.equal(parts.payload.toString(), stripped.join('\n'));
  assert.equal(parts.author.email, 'ops@example.test');
  assert.equal(parts.message, 'signed by ops\n');
});

test('signature verdicts (table)', async () => {
  const signed = repo.write('b.yaml', 'x: 2\n').commit('ok', ops);
  const bySubkey = repo.write('c.yaml', 'x: 3\n').commit('subkey', ops, `${ops.subkeyFingerprint}!`);
  const unsigned = repo.write('d.yaml', 'x: 4\n').commit('unsigned');
  const byMallory = repo.write('e.yaml', 'x: 5\n').commit('mallory', mallory);
  const tampered = repo.tamper(signed, (r) => r.replace('\n\nok', '\n\nok (edited)'));
  const both = ops.armoredPublicKey + mallory.armoredPublicKey;
  const rows: { name: string; sha: string; keyring: string; allowed?: string[]; want: string }[] = [
    { name: 'signed, key in keyring', sha: signed, keyring: ops.armoredPublicKey, want: `ok ${ops.fingerprint}` },
    { name: 'signed, primary in allowedSigners', sha: signed, keyring: both, allowed: [ops.fingerprint], want: `ok ${ops.fingerprint}` },
    { name: 'signed by subkey, primary allowed', sha: bySubkey, keyring: both, allowed: [ops.fingerprint], want: `ok ${ops.fingerprint}` },
    { name: 'signed by subkey, subkey allowed', sha: bySubkey, keyring: both, allowed: [ops.subkeyFingerprint!], want: `ok ${ops.fingerprint}` },
    { name: 'unsigned', sha: unsigned, keyring: both, want: 'SignatureMissing' },
    { name: 'signer not in keyring', sha: byMallory, keyring: ops.armoredPublicKey, want: 'SignerUnknown' },
    { name: 'signer not in allowedSigners', sha: byMallory, keyring: both, allowed: [ops.fingerprint], want: 'SignerNotAllowed' },
    { name: 'tampered content, original signature', sha: tampered, keyring: both, want: 'SignatureInvalid' },
  ];
  for (const r of rows) assert.equal(await verdict(r.sha, r.keyring, r.allowed), r.want, r.name);
});

test('a keyring that is not OpenPGP is refused as KeyringInvalid', async () => {
  await assert.rejects(readKeyring('not a key'), (e: ReconcileError) => e.reason === 'KeyringInvalid');
});

test('allowedSigners accepts 16-hex key IDs and any case', () => {
  const s = { fingerprint: 'AAAA0000BBBB1111CCCC2222DDDD3333EEEE4444', signingKey: '1111222233334444555566667777888899990000', userId: '' };
  assert.equal(signerAllowed(s, []), true);
  assert.equal(signerAllowed(s, ['dddd3333eeee4444']), true);
  assert.equal(signerAllowed(s, ['7777888899990000']), true);
  assert.equal(signerAllowed(s, ['0000000000000000']), false);
});
