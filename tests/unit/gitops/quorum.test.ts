import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countQuorum, describeQuorum, pathCovers, rulesTouched, type CoSignature, type QuorumRule } from '../../../gitops/verify/quorum.js';

const A = 'A'.repeat(40);
const B = 'B'.repeat(40);
const C = 'C'.repeat(40);
const SUB = 'D'.repeat(24) + '0123456789ABCDEF';
const sig = (fingerprint: string, source = 'commit', signingKey = fingerprint): CoSignature => ({ signer: { fingerprint, signingKey, userId: `${fingerprint.slice(0, 1)} <${fingerprint.slice(0, 1).toLowerCase()}@example.test>` }, source });

test('pathCovers: folders with or without a slash, single files, leading slash (table)', () => {
  const rows: { path: string; file: string; want: boolean }[] = [
    { path: 'prod/', file: 'prod/pools.yaml', want: true },
    { path: 'prod', file: 'prod/a/b.yaml', want: true },
    { path: '/prod/', file: 'prod/pools.yaml', want: true },
    { path: 'prod/', file: 'production/pools.yaml', want: false },
    { path: 'prod/', file: 'staging/prod/pools.yaml', want: false },
    { path: 'prod/pools.yaml', file: 'prod/pools.yaml', want: true },
    { path: 'prod/pools.yaml', file: 'prod/pools.yaml.bak', want: false },
    { path: '/', file: 'anything.yaml', want: true },
  ];
  for (const r of rows) assert.equal(pathCovers(r.path, r.file), r.want, `${r.path} ${r.file}`);
});

test('rulesTouched: only rules with changed files, each with its files', () => {
  const rules: QuorumRule[] = [{ path: 'prod/', keys: [A, B], required: 2 }, { path: 'dns/', keys: [A], required: 1 }];
  assert.deepEqual(rulesTouched(rules, ['pools/eu.yaml', 'prod/a.yaml', 'prod/b.yaml']).map((t) => [t.index, t.files]), [[0, ['prod/a.yaml', 'prod/b.yaml']]]);
  assert.deepEqual(rulesTouched(rules, ['pools/eu.yaml']), []);
});

test('countQuorum: distinct listed keys, by fingerprint, key ID or signing subkey (table)', () => {
  const rule: QuorumRule = { path: 'prod/', keys: [A, B, C.slice(24)], required: 2 };
  const rows: { name: string; sigs: CoSignature[]; want: { met: boolean; by: string[]; missing: number } }[] = [
    { name: 'head only', sigs: [sig(A)], want: { met: false, by: [A], missing: 1 } },
    { name: 'head and a tag of another listed key', sigs: [sig(A), sig(B, 'tag b')], want: { met: true, by: [A, B], missing: 0 } },
    { name: 'the same key twice counts once', sigs: [sig(A), sig(A, 'tag again')], want: { met: false, by: [A], missing: 1 } },
    { name: 'a key listed by its 16-hex ID', sigs: [sig(A), sig(C, 'tag c')], want: { met: true, by: [A, C], missing: 0 } },
    { name: 'an unlisted key does not count', sigs: [sig(A), sig('E'.repeat(40), 'tag e')], want: { met: false, by: [A], missing: 1 } },
    { name: 'nobody', sigs: [], want: { met: false, by: [], missing: 2 } },
  ];
  for (const r of rows) {
    const v = countQuorum(rule, r.sigs);
    assert.deepEqual({ met: v.met, by: v.signedBy.map((s) => s.signer.fingerprint), missing: v.missing }, r.want, r.name);
  }
  // a signing subkey listed on its own counts for its primary key
  const sub = countQuorum({ path: 'prod/', keys: [SUB], required: 1 }, [sig(A, 'commit', SUB)]);
  assert.equal(sub.met, true);
});

test('describeQuorum names the rule, the files, who signed where and how many are missing', () => {
  const t = { rule: { path: 'prod/', keys: [A, B, C], required: 2 }, index: 0, files: ['prod/a.yaml', 'prod/b.yaml', 'prod/c.yaml', 'prod/d.yaml'] };
  assert.equal(describeQuorum(t, countQuorum(t.rule, [sig(A)])),
    `changes under prod/ (prod/a.yaml, prod/b.yaml, prod/c.yaml, … 4 files) need signatures of 2 of 3 listed keys (gitops.quorum[0]): signed by ${A} (A <a@example.test>) on the commit; 1 missing`);
  assert.match(describeQuorum(t, countQuorum(t.rule, [])), /signed by no listed key; 2 missing$/);
});
