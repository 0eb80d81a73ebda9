import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answersDiffer, isOrdered, parseQueryLog, replaySteps, replayTraffic, type Answered } from '../../../gitops/replay/index.js';
import { parseQueryLogSteps } from '../../../gitops/replay/query-log.js';
import { runSliced, Slicer } from '../../../core/apply/slicer.js';
import { validateConfigObject } from '../../../runtime/config/load.js';
import { HealthView } from '../../../runtime/ports/health-view.js';
import type { Row } from '../../../core/model/types.js';
import { emptySnapshot, nextSnapshot } from '../../../core/snapshot/snapshot.js';

const step = (reason: string) => ({ step: 's', input: [], output: [], reason });

test('isOrdered: the last step that set the order decides (table)', () => {
  const cases: { name: string; reasons: string[]; want: boolean }[] = [
    { name: 'round-robin', reasons: ['AllHealthy', 'AlreadyInScoreOrder', 'Rotation 2'], want: false },
    { name: 'weighted', reasons: ['AllHealthy', 'SortedByScore', 'WeightedRandom'], want: false },
    { name: 'geo by distance', reasons: ['AllHealthy', 'AlreadyInScoreOrder', 'ByDistance from 51.51,-0.09'], want: true },
    { name: 'geo without a location', reasons: ['AllHealthy', 'AlreadyInScoreOrder', 'UnknownClientLocationRoundRobin'], want: false },
    { name: 'map-file rule', reasons: ['AllHealthy', 'RuleMatched 10.0.0.0/8 -> 10.0.0.1'], want: true },
    { name: 'map-file no rule (registered order)', reasons: ['AllHealthy', 'NoRuleMatched'], want: true },
    { name: 'asn no rule', reasons: ['AllHealthy', 'NoRuleMatchedRoundRobin'], want: false },
    { name: 'failover', reasons: ['AllHealthy', 'LowestPriority'], want: true },
    { name: 'round-robin then latency', reasons: ['AllHealthy', 'Rotation 1', 'ByProbeRtt'], want: true },
    { name: 'round-robin then rum fallback', reasons: ['AllHealthy', 'Rotation 0', 'RumFallbackOrder'], want: true },
    { name: 'no selection (NXDOMAIN, SOA)', reasons: [], want: true },
  ];
  for (const c of cases) assert.equal(isOrdered(c.reasons.map(step)), c.want, c.name);
});

test('answersDiffer: rcode, the set, and the first address only where the order is the client\'s (table)', () => {
  const a = (rcode: number, ips: string[], ordered = true): Answered => ({ rcode, ips, ordered });
  const cases: { name: string; before: Answered; after: Answered; want: boolean }[] = [
    { name: 'same', before: a(0, ['1', '2']), after: a(0, ['1', '2']), want: false },
    { name: 'rotation', before: a(0, ['1', '2', '3'], false), after: a(0, ['2', '3', '1'], false), want: false },
    { name: 'member removed', before: a(0, ['1', '2', '3'], false), after: a(0, ['1', '2'], false), want: true },
    { name: 'member replaced', before: a(0, ['1', '2']), after: a(0, ['1', '3']), want: true },
    { name: 'another first address (geo rule)', before: a(0, ['1', '2']), after: a(0, ['2', '1']), want: true },
    { name: 'another first, one side rotating', before: a(0, ['1', '2']), after: a(0, ['2', '1'], false), want: false },
    { name: 'single answer: the chosen member', before: a(0, ['1']), after: a(0, ['2']), want: true },
    { name: 'single answer: same member', before: a(0, ['1'], false), after: a(0, ['1'], false), want: false },
    { name: 'NOERROR to NXDOMAIN', before: a(0, ['1']), after: a(3, []), want: true },
    { name: 'NODATA to NODATA', before: a(0, []), after: a(0, []), want: false },
  ];
  for (const c of cases) assert.equal(answersDiffer(c.before, c.after), c.want, c.name);
});

test('parseQueryLog: the query lines of a JSON log; everything else counted as skipped', () => {
  const log = [
    JSON.stringify({ level: 30, msg: 'dns listening', addr: '127.0.0.1' }),
    JSON.stringify({ level: 30, msg: 'dns query', name: 'www.example.test', type: 'A', src: '127.0.0.1', ecs: '81.2.69.0/24', rcode: 'NOERROR', answers: ['10.0.0.1'] }),
    JSON.stringify({ msg: 'dns query', name: 'www.example.test', type: 'AAAA', src: '::ffff:127.0.0.1' }),
    JSON.stringify({ msg: 'dns query', name: 'example.test', type: 'AXFR', src: '127.0.0.1' }),
    JSON.stringify({ msg: 'dns query', name: 'x.example.test', type: 'A', src: 'not-an-ip' }),
    JSON.stringify({ msg: 'dns query', name: 'x.example.test', type: 'A', src: '127.0.0.1', ecs: 'bogus' }),
    '12:00:01 INFO dns query name=www.example.test',
    '',
  ].join('\n');
  const r = parseQueryLog(log);
  assert.deepEqual(r.queries, [
    { name: 'www.example.test', type: 'A', src: '127.0.0.1', ecs: '81.2.69.0/24' },
    { name: 'www.example.test', type: 'AAAA', src: '::ffff:127.0.0.1' },
  ]);
  assert.equal(r.skipped, 5);
});

test('parseQueryLogSteps: a large sample in steps, with the result of parseQueryLog', () => {
  const lines = Array.from({ length: 5001 }, (_, i) => (i % 10 === 9 ? 'not json' : JSON.stringify({ msg: 'dns query', name: `s${i}.example.test`, type: 'A', src: '192.0.2.1' })));
  const text = `${lines.join('\r\n')}\n`;
  const steps = parseQueryLogSteps(text);
  let pauses = 0;
  let r = steps.next();
  for (; !r.done; r = steps.next()) pauses++;
  assert.equal(pauses, 2, 'a pause every 2,000 lines');
  assert.deepEqual(r.value, parseQueryLog(text));
  assert.equal(r.value.queries.length, 4501);
  assert.equal(r.value.skipped, 500);
  assert.equal(r.value.queries[0]!.name, 's0.example.test', 'CRLF line ends are trimmed');
});

test('replayTraffic: a removed member changes every answer of its service; rotation alone never does; deterministic', async () => {
  const meta = (id: string) => ({ id, origin: 'git' as const, revision: 'r', tenantId: 'default' });
  const member = (ip: string) => ({ kind: 'member', ...meta(`m-${ip}`), poolId: 'p', ipAddress: ip, port: 80, weight: 1, priority: 0, enabled: true, rumUrl: null }) as Row;
  const svc = (name: string, algorithm: string) => ({ kind: 'service', ...meta(`s-${name}`), name, domain: `${name}.example.test.`, algorithm, ttl: 30, poolId: 'p', chain: [], whenAllUnhealthy: 'all', asnRules: [] }) as Row;
  const base: Row[] = [{ kind: 'pool', ...meta('p'), name: 'web' } as Row, member('10.0.0.1'), member('10.0.0.2'), member('10.0.0.3'), svc('rr', 'round-robin'), svc('w', 'weighted-round-robin')];
  const current = nextSnapshot(emptySnapshot(), base.map((row) => ({ op: 'put' as const, row })), 'a', 0);
  const same = nextSnapshot(current, [{ op: 'put', row: { ...(svc('rr', 'round-robin') as object), ttl: 60 } as Row }], 'b', 0);
  const fewer = nextSnapshot(current, [{ op: 'delete', kind: 'member', id: 'm-10.0.0.3' } as never], 'c', 0);
  const env = { config: validateConfigObject({ dns: { domain: 'example.test.' } }), health: new HealthView(), geo: { city: undefined, asn: undefined, endpointLocations: {} } };
  const queries = Array.from({ length: 20 }, (_, i) => ({ name: i % 2 ? 'rr.example.test' : 'w.example.test', type: 'A', src: `192.0.2.${i}` }));
  queries.push({ name: 'none.example.test', type: 'A', src: '192.0.2.99' });

  const unchanged = replayTraffic(queries, current, same, env);
  assert.equal(unchanged.changed, 0, JSON.stringify(unchanged.examples));
  const r = replayTraffic(queries, current, fewer, env);
  assert.equal(r.queries, 21);
  assert.equal(r.changed, 20);
  assert.equal(r.percent, 95.24);
  assert.deepEqual(r.byService.map((g) => [g.key, g.queries, g.changed]), [['rr (pool web)', 10, 10], ['w (pool web)', 10, 10], ['(no service)', 1, 0]]);
  assert.deepEqual(r.byCountry, [{ key: 'unknown', queries: 21, changed: 20, percent: 95.24 }]);
  assert.deepEqual(r.geo, { country: false, asn: false });
  assert.deepEqual(replayTraffic(queries, current, fewer, env), r, 'the same replay gives the same report');
  // in the daemon it runs in slices (gitops/replay/hold.ts): the same report, paused between steps
  let pauses = 0;
  const many = Array.from({ length: 200 }, (_, i) => queries[i % queries.length]!);
  const sliced = await runSliced(replaySteps(many, current, fewer, env), new Slicer(0, async () => { pauses++; }));
  assert.deepEqual(sliced, replayTraffic(many, current, fewer, env));
  assert.ok(pauses >= 3, `paused every 64 queries (${pauses})`);
});
