import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideHealth, type PolicyName } from '../../../runtime/cluster/policies.js';
import type { HealthEntry } from '../../../runtime/ports/health-view.js';

const up: HealthEntry = { healthy: true, score: 1, lastChecked: 1, rttMs: 1, node: 'self' };
const down: HealthEntry = { healthy: false, score: 0, lastChecked: 1, rttMs: 1, node: 'self' };
const L = { none: undefined, up, down } as const;

// [local, live peer reports, quorumMinPercent] → verdict per policy
type Row = { name: string; local: keyof typeof L; peers: boolean[]; q?: number; want: Record<PolicyName, boolean> };
const rows: Row[] = [
  { name: 'nobody reports: optimistic', local: 'none', peers: [], want: { 'prefer-local': true, 'local-only': true, 'global-any-healthy': true, 'global-quorum': true } },
  { name: 'local up, no peers', local: 'up', peers: [], want: { 'prefer-local': true, 'local-only': true, 'global-any-healthy': true, 'global-quorum': true } },
  { name: 'local down, no peers (all peers gone)', local: 'down', peers: [], want: { 'prefer-local': false, 'local-only': false, 'global-any-healthy': false, 'global-quorum': false } },
  { name: 'local down, one peer up', local: 'down', peers: [true], want: { 'prefer-local': false, 'local-only': false, 'global-any-healthy': true, 'global-quorum': false } },
  { name: 'local up, one peer down', local: 'up', peers: [false], want: { 'prefer-local': true, 'local-only': true, 'global-any-healthy': true, 'global-quorum': false } },
  { name: 'local up, one peer down, quorum 50', local: 'up', peers: [false], q: 50, want: { 'prefer-local': true, 'local-only': true, 'global-any-healthy': true, 'global-quorum': true } },
  { name: 'no local, peers up+down', local: 'none', peers: [true, false], want: { 'prefer-local': true, 'local-only': true, 'global-any-healthy': true, 'global-quorum': false } },
  { name: 'no local, peers all down', local: 'none', peers: [false, false], want: { 'prefer-local': false, 'local-only': true, 'global-any-healthy': false, 'global-quorum': false } },
  { name: 'no local, 2 of 3 up', local: 'none', peers: [true, true, false], want: { 'prefer-local': true, 'local-only': true, 'global-any-healthy': true, 'global-quorum': true } },
  { name: 'local down, 2 of 3 peers up: 2/4 < 51%', local: 'down', peers: [true, true, false], want: { 'prefer-local': false, 'local-only': false, 'global-any-healthy': true, 'global-quorum': false } },
  { name: 'local up, 2 of 3 peers up: 3/4', local: 'up', peers: [true, true, false], want: { 'prefer-local': true, 'local-only': true, 'global-any-healthy': true, 'global-quorum': true } },
  { name: 'quorum 100 needs all', local: 'up', peers: [true, true, false], q: 100, want: { 'prefer-local': true, 'local-only': true, 'global-any-healthy': true, 'global-quorum': false } },
  { name: 'quorum 0 with all down', local: 'down', peers: [false], q: 0, want: { 'prefer-local': false, 'local-only': false, 'global-any-healthy': false, 'global-quorum': true } },
  { name: 'no local, one peer up', local: 'none', peers: [true], want: { 'prefer-local': true, 'local-only': true, 'global-any-healthy': true, 'global-quorum': true } },
];

test('health policies follow their truth tables', () => {
  for (const r of rows) {
    for (const policy of Object.keys(r.want) as PolicyName[]) {
      const got = decideHealth(policy, { local: L[r.local], peerReports: r.peers.length, peerHealthy: r.peers.filter((h) => h).length, quorumMinPercent: r.q ?? 51 });
      assert.equal(got, r.want[policy], `${r.name}: ${policy}`);
    }
  }
});
