import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { dig, firstAnswers, makeService, untilAnswers } from '../helpers/dns-tools.js';
import { writeAsnDb, writeCityDb } from '../helpers/mmdb-fixtures.js';

let d: TestDaemon;
let port: number;
let dir: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gslbd-dns-algo-'));
  d = await startTestDaemon({
    dns: { listenAddr: '127.0.0.1', port: 0, domain: 'gslb.test' } as never,
    loadbalancer: {
      algorithm: 'asn', endpoints: ['192.0.2.101', '192.0.2.102', '192.0.2.103'], ttl: 30,
      asn: { dbPath: writeAsnDb(dir), rules: [{ asn: 64500, endpoint: '192.0.2.102' }, { org: 'telstra', endpoint: '192.0.2.103' }] },
      geoip: { dbPath: writeCityDb(dir), endpointLocations: { '192.0.2.20': { lat: 40.7128, lon: -74.006 } } },
    } as never,
  });
  port = d.ports.dnsPort as number;
});
after(async () => { await d?.stop(); rmSync(dir, { recursive: true, force: true }); });

const a = async (name: string, ...extra: string[]) => (await dig(port, [name, 'A', ...extra]));

test('geo-ip: nearest first by the client subnet, unknown location last, unknown client rotates', async () => {
  await makeService(d, { name: 'geo', domain: 'geo.gslb.test.', algorithm: 'geoip' },
    [{ ipAddress: '192.0.2.40' }, { ipAddress: '192.0.2.30' }, { ipAddress: '192.0.2.20' }, { ipAddress: '192.0.2.10' }]);
  const rows = [
    { subnet: '81.2.69.0/24', want: ['192.0.2.10', '192.0.2.20', '192.0.2.30', '192.0.2.40'] },
    { subnet: '203.0.113.0/24', want: ['192.0.2.30', '192.0.2.10', '192.0.2.20', '192.0.2.40'] },
    { subnet: '198.51.100.0/24', want: ['192.0.2.20', '192.0.2.10', '192.0.2.30', '192.0.2.40'] },
  ];
  for (const r of rows) {
    const res = await a('geo.gslb.test', `+subnet=${r.subnet}`);
    assert.deepEqual(res.answers, r.want, r.subnet);
    assert.equal(res.ecs, `${r.subnet}/24`, 'scope = source prefix for a client-specific answer');
  }
  const firsts = new Set<string>();
  for (let i = 0; i < 4; i++) firsts.add((await a('geo.gslb.test')).answers[0]!);
  assert.equal(firsts.size, 4, 'unknown client (loopback): round-robin order');
});

test('map-file over the pool geo rules: longest prefix first, by ECS subnet', async () => {
  await makeService(d, { name: 'map', domain: 'map.gslb.test.', algorithm: 'mapfile' },
    [{ ipAddress: '192.0.2.51' }, { ipAddress: '192.0.2.52' }, { ipAddress: '192.0.2.53' }],
    [{ cidr: '10.0.0.0/8', endpoint: '192.0.2.52' }, { cidr: '10.1.0.0/16', endpoint: '192.0.2.53' }]);
  const rows = [
    { extra: ['+subnet=10.9.0.0/16'], want: ['192.0.2.52', '192.0.2.51', '192.0.2.53'] },
    { extra: ['+subnet=10.1.7.0/24'], want: ['192.0.2.53', '192.0.2.51', '192.0.2.52'] },
    { extra: ['+subnet=172.16.0.0/12'], want: ['192.0.2.51', '192.0.2.52', '192.0.2.53'] },
    { extra: [], want: ['192.0.2.51', '192.0.2.52', '192.0.2.53'] },
  ];
  for (const r of rows) for (let i = 0; i < 2; i++) assert.deepEqual((await a('map.gslb.test', ...r.extra)).answers, r.want, r.extra.join(' '));
});

test('asn (static configuration): asn exact, org substring, unmatched round-robin', async () => {
  const rows = [
    { subnet: '100.64.1.0/24', first: '192.0.2.102' },
    { subnet: '1.128.0.0/16', first: '192.0.2.103' },
  ];
  for (const r of rows) {
    const res = await a('gslb.test', `+subnet=${r.subnet}`);
    assert.equal(res.answers[0], r.first, r.subnet);
    assert.equal(res.answers.length, 3);
    assert.match(res.text, /gslb\.test\.\s+30\s+IN\s+A/, 'loadbalancer.ttl');
  }
  const firsts = new Set<string>();
  for (let i = 0; i < 3; i++) firsts.add((await a('any.name.gslb.test', '+subnet=100.96.0.0/16')).answers[0]!);
  assert.equal(firsts.size, 3, 'unmatched AS: rotation over every static endpoint');
});

test('asn for an API service: rules from the service', async () => {
  await makeService(d, { name: 'asn', domain: 'asn.gslb.test.', algorithm: 'asn', asnRules: [{ org: 'big telecom', endpoint: '192.0.2.62' }] },
    [{ ipAddress: '192.0.2.61' }, { ipAddress: '192.0.2.62' }]);
  assert.deepEqual((await a('asn.gslb.test', '+subnet=100.96.5.0/24')).answers, ['192.0.2.62', '192.0.2.61']);
});

test('weighted-round-robin follows the weights; weight 0 is never answered', async () => {
  const s = await makeService(d, { name: 'wrr', domain: 'wrr.gslb.test.', algorithm: 'weighted-round-robin' },
    [{ ipAddress: '192.0.2.71', weight: 3 }, { ipAddress: '192.0.2.72', weight: 1 }, { ipAddress: '192.0.2.73', weight: 1 }]);
  await api(d.url, 'PUT', `/api/v1/members/${s.memberIds[2]}`, { weight: 0 });
  assert.equal((await a('wrr.gslb.test')).answers.length, 2, 'dig sees the two weighted members');
  const firsts = await firstAnswers(port, 'wrr.gslb.test', 800);
  const share = firsts.filter((f) => f === '192.0.2.71').length / firsts.length;
  assert.ok(share > 0.68 && share < 0.82, `weight-3 member first in ${share}`);
  assert.equal(firsts.filter((f) => f === '192.0.2.73').length, 0);
});

test('failover: one answer by priority, 0 last, immediate failback', async () => {
  const s = await makeService(d, { name: 'fo', domain: 'fo.gslb.test.', algorithm: 'failover' },
    [{ ipAddress: '192.0.2.81', priority: 0 }, { ipAddress: '192.0.2.82', priority: 2 }, { ipAddress: '192.0.2.83', priority: 1 }]);
  const mark = (ip: string, healthy: boolean) => d.core.health.set(s.poolId, ip, { healthy, score: healthy ? 1 : 0, lastChecked: Date.now(), rttMs: 1, node: 'test-node' });
  assert.deepEqual((await a('fo.gslb.test', '+tcp')).answers, ['192.0.2.83']);
  // untilAnswers: the verdict reaches the DNS worker threads on a later turn
  mark('192.0.2.83', false);
  await untilAnswers(port, ['fo.gslb.test', 'A'], ['192.0.2.82'], 'the next priority');
  mark('192.0.2.82', false);
  await untilAnswers(port, ['fo.gslb.test', 'A'], ['192.0.2.81'], 'priority 0 is last resort');
  mark('192.0.2.83', true);
  await untilAnswers(port, ['fo.gslb.test', 'A'], ['192.0.2.83'], 'failback at once (no rise delay)');
});

test('chain geo-ip then rum; POST /simulate shows every step and the answer', async () => {
  const s = await makeService(d, { name: 'chain', domain: 'chain.gslb.test.', chain: ['geo-ip', 'rum-latency'] },
    [{ ipAddress: '192.0.2.30' }, { ipAddress: '192.0.2.10' }, { ipAddress: '192.0.2.20' }]);
  const res = await a('chain.gslb.test', '+subnet=81.2.69.0/24');
  assert.deepEqual(res.answers, ['192.0.2.10'], 'no RUM and no RTT: nearest first, one answer');
  d.core.health.set(s.poolId, '192.0.2.20', { healthy: true, score: 1, lastChecked: Date.now(), rttMs: 3, node: 'test-node' });
  d.core.health.set(s.poolId, '192.0.2.10', { healthy: true, score: 1, lastChecked: Date.now(), rttMs: 40, node: 'test-node' });
  await untilAnswers(port, ['chain.gslb.test', 'A', '+subnet=81.2.69.0/24'], ['192.0.2.20'], 'probe RTT decides');
  const sim = await api(d.url, 'POST', '/api/v1/simulate', { name: 'chain.gslb.test', type: 'A', clientIp: '127.0.0.1', ecsSubnet: '81.2.69.0/24' });
  assert.equal(sim.status, 200, JSON.stringify(sim.body));
  assert.deepEqual(sim.body.steps.map((x: { step: string }) => x.step), ['health', 'score', 'round-robin', 'geo-ip', 'rum']);
  assert.deepEqual(sim.body.steps[3].output, ['192.0.2.10', '192.0.2.20', '192.0.2.30']);
  assert.match(sim.body.steps[4].reason, /RumFallbackProbeRtt 3ms/);
  assert.equal(sim.body.rcode, 'NOERROR');
  assert.equal(sim.body.ecsScope, 24);
  assert.deepEqual(sim.body.answers.map((x: { data: string }) => x.data), ['192.0.2.20']);
  const bad = await api(d.url, 'POST', '/api/v1/simulate', { name: 'chain.gslb.test', clientIp: 'nope' });
  assert.equal(bad.status, 400);
  assert.equal(typeof bad.body.error, 'string');
  const refused = await api(d.url, 'POST', '/api/v1/simulate', { name: 'www.example.org', clientIp: '192.0.2.1' });
  assert.equal(refused.body.rcode, 'REFUSED');
});
