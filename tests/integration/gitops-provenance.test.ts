import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startGitFixture, type GitFixture } from '../helpers/git-fixture.js';
import { dig } from '../helpers/dns-tools.js';
import { Recorder } from '../helpers/recorder.js';

const EXAMPLE = join(import.meta.dirname, '../../examples/config-repo');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The one CHAOS TXT string of `dig CH TXT <name>`, unquoted. */
async function versionTxt(port: number, name = 'version.gslb.'): Promise<{ status: string; text: string | undefined; raw: string }> {
  const r = await dig(port, [name, 'TXT', 'CH']);
  assert.ok(r.answers.length <= 1, r.text);
  return { status: r.status, text: r.answers[0]?.replace(/^"|"$/g, ''), raw: r.text };
}

describe('provenance: what every node serves, over CHAOS TXT, in the status and in alerts', () => {
  let fx: GitFixture;
  let d: TestDaemon;
  let port: number;
  const hooks = new Recorder();
  let good = '';

  before(async () => {
    fx = await startGitFixture();
    fx.copyTree(EXAMPLE);
    good = fx.repo.commit('Add the example config', fx.ops);
    const url = await hooks.start();
    d = await startTestDaemon({ gitops: fx.gitops, alerts: { webhooks: [{ url: `${url}/hook` }] } });
    port = d.ports.dnsPort as number;
  });
  after(async () => {
    await d?.stop();
    await hooks.stop();
    await fx?.close();
  });

  it('answers dig CH TXT version.gslb. with the applied commit, signer, time and plan id, as the status does', async () => {
    const before = await versionTxt(port);
    assert.equal(before.status, 'NOERROR');
    assert.equal(before.text, 'commit=none signer=none applied=none plan=none');
    const s = (await api(d.url, 'POST', '/api/v1/gitops/reconcile', {})).body;
    assert.equal(s.ready, true, s.message);
    const st = (await api(d.url, 'GET', '/api/v1/gitops/status')).body;
    const h = (await api(d.url, 'GET', '/api/v1/gitops/history')).body;
    assert.match(h[0].planId, /^[0-9a-f]{16}$/);
    assert.deepEqual({ ...st.provenance, appliedAt: undefined }, {
      commit: good, signer: fx.ops.fingerprint, revision: good, origin: 'git', appliedAt: undefined, planId: h[0].planId,
      text: `commit=${good} signer=${fx.ops.fingerprint} applied=${iso(st.provenance.appliedAt)} plan=${h[0].planId}`,
    });
    assert.ok(Math.abs(st.provenance.appliedAt - h[0].appliedAt) < 1000);
    const r = await versionTxt(port);
    assert.equal(r.status, 'NOERROR');
    assert.equal(r.text, st.provenance.text);
    assert.match(r.raw, /version\.gslb\.\s+0\s+CH\s+TXT/, 'class CH, TTL 0');
    assert.match(r.raw, /flags: qr aa/, 'authoritative');
    // the same over TCP, and the name matched case-insensitively
    assert.equal((await dig(port, ['VERSION.Gslb.', 'TXT', 'CH', '+tcp'])).answers[0], `"${st.provenance.text}"`);
  });

  it('keeps refusing every other CHAOS query', async () => {
    const rows = [
      { name: 'version.bind', args: ['version.bind', 'TXT', 'CH'] },
      { name: 'hostname.bind', args: ['hostname.bind', 'TXT', 'CH'] },
      { name: 'version.gslb A', args: ['version.gslb.', 'A', 'CH'] },
      { name: 'version.gslb in class IN', args: ['version.gslb.', 'TXT'] },
    ];
    for (const r of rows) {
      const res = await dig(port, r.args);
      assert.equal(res.status, 'REFUSED', r.name);
      assert.equal(res.answers.length, 0, r.name);
    }
  });

  it('says so when a REST write is the latest revision', async () => {
    const created = await api(d.url, 'POST', '/api/v1/pools', { name: 'rest-pool' });
    assert.equal(created.status, 201);
    const st = (await api(d.url, 'GET', '/api/v1/gitops/status')).body;
    assert.equal(st.provenance.commit, good);
    assert.equal(st.provenance.origin, 'api');
    assert.match(st.provenance.revision, /^api:/);
    assert.equal(st.provenance.text, `commit=${good} signer=${fx.ops.fingerprint} applied=${iso(st.provenance.appliedAt)} plan=${st.provenance.planId} rest=${st.provenance.revision}`);
    assert.equal((await versionTxt(port)).text, st.provenance.text);
  });

  it('puts the served commit and the seconds since apply in every alert', async () => {
    fx.repo.write('pools/extra.yaml', 'apiVersion: gslb/v1\nkind: Pool\nmetadata: {name: extra}\nspec: {}\n').commit('unsigned change');
    const s = (await api(d.url, 'POST', '/api/v1/gitops/reconcile', {})).body;
    assert.equal(s.reason, 'SignatureMissing');
    // the example's members (127.0.0.10, .11) have no server: the real health checker flips them
    const until = async (pred: (j: Record<string, unknown>) => boolean) => {
      for (let n = 1; ; n++) {
        const found = (await hooks.waitFor(n, 15_000)).find((r) => pred(r.json as Record<string, unknown>));
        if (found) return found.json as Record<string, unknown>;
      }
    };
    const rejection = await until((j) => j.type === 'gitops_rejected');
    assert.equal(rejection.reason, 'SignatureMissing');
    assert.equal(rejection.appliedCommit, good, 'the refused head is not what the node serves');
    const since = rejection.secondsSinceApply as number;
    assert.ok(Number.isInteger(since) && since >= 0 && since < 60, String(since));
    const flip = await until((j) => typeof j.poolId === 'string');
    assert.deepEqual(Object.keys(flip), ['poolId', 'ipAddress', 'healthy', 'timestamp', 'appliedCommit', 'secondsSinceApply']);
    assert.equal(flip.appliedCommit, good);
    fx.repo.resetTo(good);
  });
});

describe('dns.versionName', () => {
  it('is switched off with an empty name: every CHAOS query is REFUSED', async () => {
    const d = await startTestDaemon({ dns: { listenAddr: '127.0.0.1', port: 0, versionName: '' } as never });
    try {
      const r = await versionTxt(d.ports.dnsPort as number);
      assert.equal(r.status, 'REFUSED');
    } finally {
      await d.stop();
    }
  });

  it('answers under another configured name', async () => {
    const d = await startTestDaemon({ dns: { listenAddr: '127.0.0.1', port: 0, versionName: 'id.ops.example' } as never });
    try {
      const port = d.ports.dnsPort as number;
      assert.equal((await versionTxt(port, 'id.ops.example.')).text, 'commit=none signer=none applied=none plan=none');
      assert.equal((await versionTxt(port)).status, 'REFUSED');
    } finally {
      await d.stop();
    }
  });
});
