import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { dig } from '../helpers/dns-tools.js';
import { startGitFixture, type GitFixture } from '../helpers/git-fixture.js';
import { asnRecord, buildMmdb, cityRecord } from '../helpers/mmdb-writer.js';
import { runEntry } from '../helpers/proc.js';

// Traffic replay: a real daemon with the query log on answers dig queries from three ECS subnets
// (and one without); its own log is the query log. The proposed config drops a member of a
// round-robin pool and moves a map-file rule; `gslbctl diff --replay` replays the log through the
// selection code against the running state and the proposal and counts what clients would see
// change, grouped by country, AS and service, with --max-changed deciding the exit code.
const SYS = randomBytes(32).toString('hex');
let fx: GitFixture;
let d: TestDaemon;
let dir = '';
let logFile = '';
let proposal = '';
let configFile = '';

const pools = (webMembers: string[], jpEndpoint: string) => `apiVersion: gslb/v1
kind: Pool
metadata: {name: web}
spec:
  members: [${webMembers.map((ip) => `{ipAddress: ${ip}, port: 80}`).join(', ')}]
---
apiVersion: gslb/v1
kind: Pool
metadata: {name: geo}
spec:
  members: [{ipAddress: 127.0.0.71, port: 80}, {ipAddress: 127.0.0.72, port: 80}]
  geoRules:
    - {cidr: 81.2.69.0/24, endpoint: 127.0.0.71}
    - {cidr: 203.0.113.0/24, endpoint: ${jpEndpoint}}
---
apiVersion: gslb/v1
kind: Service
metadata: {name: www}
spec: {domain: www.replay.test., pool: web, algorithm: round-robin, ttl: 30}
---
apiVersion: gslb/v1
kind: Service
metadata: {name: map}
spec: {domain: map.replay.test., pool: geo, algorithm: map-file, ttl: 30}
`;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gslbd-replay-'));
  const country = (iso: string, lat: number, lon: number) => ({ ...(cityRecord(lat, lon) as Record<string, never>), country: { iso_code: iso } });
  const city = join(dir, 'city.mmdb');
  const asn = join(dir, 'asn.mmdb');
  writeFileSync(city, buildMmdb({ databaseType: 'GeoIP2-City', entries: [
    { cidr: '81.2.69.0/24', data: country('GB', 51.5, -0.09) },
    { cidr: '203.0.113.0/24', data: country('JP', 35.7, 139.7) },
    { cidr: '198.51.100.0/24', data: country('US', 40.7, -74) },
  ] }));
  writeFileSync(asn, buildMmdb({ databaseType: 'GeoLite2-ASN', entries: [
    { cidr: '81.2.69.0/24', data: asnRecord(64500, 'Example Carrier') },
    { cidr: '203.0.113.0/24', data: asnRecord(64501, 'Far Telecom') },
  ] }));
  fx = await startGitFixture();
  fx.repo.write('replay.yaml', pools(['127.0.0.61', '127.0.0.62', '127.0.0.63'], '127.0.0.72'));
  fx.repo.commit('web and geo pools', fx.ops);
  const geo = { geoip: { dbPath: city }, asn: { dbPath: asn } };
  // the controller's sample: written below from this daemon's own log (absent at the first reconcile)
  const sample = join(dir, 'sample.log');
  d = await startTestDaemon({ gitops: { ...fx.gitops, replayLog: sample, maxChangedTraffic: 50 }, dns: { domain: 'replay.test.', queryLog: true }, loadbalancer: geo } as never, { GSLB_API_KEY: SYS, GITOPS_WEBHOOK_SECRET: fx.webhookSecret });
  const s = await api(d.url, 'POST', '/api/v1/gitops/reconcile', {}, { authorization: `Bearer ${SYS}` });
  assert.equal(s.body.ready, true, JSON.stringify(s.body));

  const port = d.core.ports.dnsPort!;
  const asked: [string, string | undefined][] = [
    ['www.replay.test', '81.2.69.0/24'], ['www.replay.test', '203.0.113.0/24'], ['www.replay.test', '198.51.100.0/24'], ['www.replay.test', undefined],
    ['map.replay.test', '81.2.69.0/24'], ['map.replay.test', '81.2.69.0/24'], ['map.replay.test', '203.0.113.0/24'], ['map.replay.test', '198.51.100.0/24'],
    ['nope.replay.test', undefined],
  ];
  for (const [name, ecs] of asked) {
    const r = await dig(port, [name, 'A', ...(ecs ? [`+subnet=${ecs}`] : [])]);
    assert.ok(r.status === 'NOERROR' || r.status === 'NXDOMAIN', r.text);
  }
  // the daemon's own log, every line of it: the replay picks the query lines out
  logFile = join(dir, 'gslbd.log');
  writeFileSync(logFile, `${d.logs.text()}\n`);
  writeFileSync(sample, `${d.logs.text()}\n`);
  const queryLines = d.logs.lines.filter((l) => l.msg === 'dns query');
  assert.equal(queryLines.length, 9);
  assert.equal(queryLines[0]!.ecs, '81.2.69.0/24', 'the query log carries the ECS subnet');
  assert.equal(queryLines[3]!.ecs, undefined);

  // the proposal: 127.0.0.63 leaves the web pool, Japan moves to 127.0.0.71
  proposal = join(dir, 'proposal');
  mkdirSync(proposal);
  writeFileSync(join(proposal, 'replay.yaml'), pools(['127.0.0.61', '127.0.0.62'], '127.0.0.71'));
  configFile = join(dir, 'gslbd.yaml');
  writeFileSync(configFile, `dns: {domain: replay.test.}\nloadbalancer: {geoip: {dbPath: ${city}}, asn: {dbPath: ${asn}}}\n`);
});

after(async () => {
  await d?.stop();
  await fx?.close();
  rmSync(dir, { recursive: true, force: true });
});

const gslbctl = (args: string[]) => runEntry('gslbctl', args, { NO_COLOR: '1', GSLB_API_KEY: SYS }, 60_000);
const groups = (list: { key: string; queries: number; changed: number }[]) => Object.fromEntries(list.map((g) => [g.key, [g.queries, g.changed]]));

/** What both ways of running the replay must find for the recorded queries and the proposal. */
function expectReport(out: { replay: Record<string, never> }) {
  const r = out.replay as unknown as {
    queries: number; changed: number; percent: number; skipped: number; geo: { country: boolean; asn: boolean };
    byCountry: { key: string; queries: number; changed: number }[]; byAsn: { key: string; queries: number; changed: number }[]; byService: { key: string; queries: number; changed: number }[];
    examples: { name: string; client: string; before: string; after: string }[];
  };
  assert.equal(r.queries, 9);
  assert.ok(r.skipped > 0, 'the log\'s other lines are skipped');
  // www: the set changes for all four; map: only Japan's first address moves (81.2.69 keeps its rule, 198.51.100 has none)
  assert.equal(r.changed, 5, JSON.stringify(r.examples, null, 1));
  assert.equal(r.percent, 55.56);
  assert.deepEqual(r.geo, { country: true, asn: true });
  assert.deepEqual(groups(r.byService), { 'www (pool web)': [4, 4], 'map (pool geo)': [4, 1], '(no service)': [1, 0] });
  assert.deepEqual(groups(r.byCountry), { GB: [3, 1], JP: [2, 2], US: [2, 1], unknown: [2, 1] });
  assert.deepEqual(groups(r.byAsn), { 'AS64500 Example Carrier': [3, 1], 'AS64501 Far Telecom': [2, 2], unknown: [4, 2] });
  const jp = r.examples.find((e) => e.name === 'map.replay.test.');
  assert.deepEqual(jp && [jp.client, jp.before, jp.after], ['203.0.113.0/24', 'NOERROR 127.0.0.72,127.0.0.71', 'NOERROR 127.0.0.71,127.0.0.72']);
}

test('gslbctl diff --replay against the running daemon: counts, shares and groups; --max-changed sets the exit code', async () => {
  const json = await gslbctl(['diff', proposal, '--server', d.url, '--replay', logFile, '-o', 'json']);
  assert.equal(json.code, 1, json.stderr);
  const out = JSON.parse(json.stdout);
  assert.deepEqual(out.counts, { create: 1, update: 0, delete: 2 }); // a geo rule is keyed by its endpoint: replaced, not updated
  expectReport(out);

  const text = await gslbctl(['diff', proposal, '--server', d.url, '--replay', logFile]);
  assert.equal(text.code, 1, text.stderr);
  assert.match(text.stdout, /Traffic replay: 5 of 9 \(55\.56 %\) answers change/);
  assert.match(text.stdout, /By country:\n {2}JP +2 of 2 \(100\.00 %\) changed/);
  assert.match(text.stdout, /www \(pool web\) +4 of 4 \(100\.00 %\) changed/);

  const within = await gslbctl(['diff', proposal, '--server', d.url, '--replay', logFile, '--max-changed', '60']);
  assert.equal(within.code, 0, within.stdout + within.stderr);
  assert.match(within.stdout, /Within the limit of 60 %/);
  const over = await gslbctl(['diff', proposal, '--server', d.url, '--replay', logFile, '--max-changed', '50']);
  assert.equal(over.code, 1);
  assert.match(over.stdout, /Over the limit: 55\.56 % of answers change, --max-changed is 50 %/);
  const bad = await gslbctl(['diff', proposal, '--server', d.url, '--max-changed', '50']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--max-changed needs --replay/);
});

test('gslbctl diff --replay against the database file (offline) finds the same', async () => {
  const r = await gslbctl(['diff', proposal, '--db', join(d.dir, 'gslbd.db'), '--config', configFile, '--replay', logFile, '--max-changed', '55.56', '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.exceeded, false);
  expectReport(out);
});

test('the controller replays gitops.replayLog against a commit and holds it back above gitops.maxChangedTraffic until forced', async () => {
  const sys = { authorization: `Bearer ${SYS}` };
  assert.ok(d.logs.lines.some((l) => l.msg === 'traffic replay skipped: gitops.replayLog cannot be read'), 'the first reconcile ran before the sample existed');
  fx.repo.write('replay.yaml', pools(['127.0.0.61', '127.0.0.62'], '127.0.0.71'));
  const sha = fx.repo.commit('drop 127.0.0.63, Japan to 127.0.0.71', fx.ops);
  const held = (await api(d.url, 'POST', '/api/v1/gitops/reconcile', {}, sys)).body;
  assert.equal(held.ready, false);
  assert.equal(held.reason, 'TooMuchTrafficChanged', held.message);
  assert.match(held.message, /changes the answers of 5 of 9 sampled queries \(55\.56 %, limit 50 %; www \(pool web\): 4 of 4; map \(pool geo\): 1 of 4\); apply with force/);
  assert.notEqual(held.lastAppliedRevision, sha);
  assert.deepEqual((await dig(d.core.ports.dnsPort!, ['www.replay.test', 'A'])).answers.sort(), ['127.0.0.61', '127.0.0.62', '127.0.0.63'], 'the old state keeps serving');

  const forced = (await api(d.url, 'POST', '/api/v1/gitops/reconcile', { force: true }, sys)).body;
  assert.equal(forced.ready, true, forced.message);
  assert.equal(forced.lastAppliedRevision, sha);
  assert.deepEqual((await dig(d.core.ports.dnsPort!, ['www.replay.test', 'A'])).answers.sort(), ['127.0.0.61', '127.0.0.62']);
});
