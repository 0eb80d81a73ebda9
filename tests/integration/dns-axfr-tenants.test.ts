import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { digText } from '../helpers/dns-tools.js';
import { planCreateAll } from '../../core/plan/delta.js';
import type { GenericRow, Row } from '../../core/model/types.js';

// Zone transfers scoped by tenant (docs/dns.md "Who gets which records"): a tenant's key transfers
// that tenant's names with the apex SOA and NS, the operator's key (`tenant: system`) the whole
// zone, a key with neither a tenant nor a grant nothing (REFUSED). Driven by dig and kdig.

const SYS = randomBytes(24).toString('hex');
const sys = { authorization: `Bearer ${SYS}` };
const secret = (s: string) => Buffer.from(s.padEnd(32, '.')).toString('base64');
const KA = `hmac-sha256:ka.example.test:${secret('tenant a')}`;
const KB = `hmac-sha256:kb.example.test:${secret('tenant b, key-level tenant')}`;
const OPS = `hmac-sha256:ops.example.test:${secret('operator')}`;
const LONE = `hmac-sha256:lone.example.test:${secret('no grant, no tenant')}`;
let d: TestDaemon;
let port = 0;

const meta = (tenantId: string) => ({ origin: 'api' as const, revision: 'api:seed', tenantId });
const txt = (id: string, name: string, values: string[], tenantId: string): GenericRow => ({ kind: 'txtrecord', id, name, values, ttl: 300, ...meta(tenantId) });
const svc = (id: string, domain: string, poolId: string, tenantId: string) =>
  ({ kind: 'service', id, name: id, domain, algorithm: 'round-robin', ttl: 60, poolId, chain: [], whenAllUnhealthy: 'all', asnRules: [], ...meta(tenantId) }) as Row;
const pool = (id: string, ip: string, tenantId: string): Row[] => [
  { kind: 'pool', id, name: id, ...meta(tenantId) } as Row,
  { kind: 'member', id: `${id}-m`, poolId: id, ipAddress: ip, port: 80, weight: 1, priority: 0, enabled: true, rumUrl: null, ...meta(tenantId) } as Row,
];

before(async () => {
  d = await startTestDaemon({
    dns: {
      listenAddr: '127.0.0.1', port: 0, domain: 'example.test', nsNames: ['ns1.example.test.'],
      axfr: { enabled: true, requireTsig: true, tsigKeys: [
        { name: 'ka.example.test', secret: secret('tenant a') },
        { name: 'kb.example.test', secret: secret('tenant b, key-level tenant'), tenant: 'b' },
        { name: 'ops.example.test', secret: secret('operator'), tenant: 'system' },
        { name: 'lone.example.test', secret: secret('no grant, no tenant') },
      ] },
      update: { enabled: true, grants: [{ key: 'ka.example.test', tenant: 'a', suffixes: ['a.example.test'] }] },
    },
  } as never, { GSLB_API_KEY: SYS });
  port = d.ports.dnsPort as number;
  for (const id of ['a', 'b']) assert.equal((await api(d.url, 'POST', '/api/v1/tenants', { id }, sys)).status, 201);
  d.core.apply(planCreateAll(d.core.holder.current, [
    ...pool('pa', '192.0.2.1', 'a'), svc('www-a', 'www.a.example.test.', 'pa', 'a'),
    ...pool('pb', '192.0.2.2', 'b'), svc('shop-b', 'shop.b.example.test.', 'pb', 'b'),
    ...pool('pns', '192.0.2.53', 'default'), svc('ns1', 'ns1.example.test.', 'pns', 'default'),
    txt('ta', '_acme-challenge.a.example.test.', ['token-of-a'], 'a'),
    txt('tb', '_acme-challenge.b.example.test.', ['token-of-b'], 'b'),
    txt('tspf', 'example.test.', ['v=spf1 -all'], 'default'),
  ], 'api:seed'));
});
after(() => d?.stop());

/** The records of a transfer's output as `owner type data` (TTLs and TSIG lines left out), sorted. */
const records = (text: string) => text.split('\n')
  .filter((l) => /^\S+\s+\d+\s+IN\s+(SOA|NS|A|AAAA|TXT)\s/.test(l))
  .map((l) => { const p = l.trim().split(/\s+/); return `${p[0]} ${p[3]} ${p.slice(4).join(' ')}`; })
  .map((l) => l.replace(/SOA (\S+ \S+) \d+ .*/, 'SOA $1'))
  .sort();

const APEX = ['example.test. NS ns1.example.test.', 'example.test. SOA ns1.example.test. hostmaster.example.test.', 'example.test. SOA ns1.example.test. hostmaster.example.test.'];
const OF_A = ['_acme-challenge.a.example.test. TXT "token-of-a"', 'www.a.example.test. A 192.0.2.1'];
const OF_B = ['_acme-challenge.b.example.test. TXT "token-of-b"', 'shop.b.example.test. A 192.0.2.2'];
const OF_OPERATOR = ['example.test. TXT "v=spf1 -all"', 'ns1.example.test. A 192.0.2.53'];

test('a tenant\'s key transfers its own names and the apex SOA and NS; the operator\'s key everything; AXFR and IXFR (from a serial the journal does not have: the whole zone), dig and kdig', async () => {
  const rows: { name: string; bin: 'dig' | 'kdig'; args: string[]; want: string[] }[] = [
    { name: 'tenant a (grant), kdig AXFR', bin: 'kdig', args: ['-y', KA, 'example.test', 'AXFR'], want: [...APEX, ...OF_A] },
    { name: 'tenant a (grant), dig AXFR', bin: 'dig', args: ['-y', KA, 'example.test', 'AXFR'], want: [...APEX, ...OF_A] },
    { name: 'tenant a (grant), kdig IXFR', bin: 'kdig', args: ['-y', KA, 'example.test', 'IXFR=0'], want: [...APEX, ...OF_A] },
    { name: 'tenant a (grant), dig IXFR', bin: 'dig', args: ['-y', KA, 'example.test', 'IXFR=0'], want: [...APEX, ...OF_A] },
    { name: 'tenant b (tenant on the key), kdig AXFR', bin: 'kdig', args: ['-y', KB, 'example.test', 'AXFR'], want: [...APEX, ...OF_B] },
    { name: 'operator, dig AXFR', bin: 'dig', args: ['-y', OPS, 'example.test', 'AXFR'], want: [...APEX, ...OF_A, ...OF_B, ...OF_OPERATOR] },
    { name: 'operator, kdig IXFR', bin: 'kdig', args: ['-y', OPS, 'example.test', 'IXFR=0'], want: [...APEX, ...OF_A, ...OF_B, ...OF_OPERATOR] },
  ];
  for (const r of rows) {
    const text = await digText(port, r.args, r.bin);
    assert.deepEqual(records(text), [...r.want].sort(), `${r.name}:\n${text}`);
  }
  const logs = d.logs.lines.filter((l) => l.msg === 'dns zone transfer');
  assert.ok(logs.some((l) => l.scope === 'a' && l.tsigKey === 'ka.example.test.'), 'the log line names the scope');
});

test('a key with no grant and no tenant is REFUSED (signed), and so is an unsigned request with requireTsig', async () => {
  for (const bin of ['dig', 'kdig'] as const) {
    const text = await digText(port, ['-y', LONE, 'example.test', 'AXFR'], bin);
    assert.match(text, bin === 'kdig' ? /REFUSED/ : /Transfer failed/, text);
    assert.equal(records(text).length, 0, text);
    const ixfr = await digText(port, ['-y', LONE, 'example.test', 'IXFR=1'], bin);
    assert.equal(records(ixfr).length, 0, ixfr);
  }
  const unsigned = await digText(port, ['example.test', 'AXFR'], 'kdig');
  assert.match(unsigned, /REFUSED/);
  assert.equal(records(unsigned).length, 0, unsigned);
  assert.ok(d.logs.lines.some((l) => String(l.msg).startsWith('dns transfers signed with this TSIG key are refused') && l.key === 'lone.example.test.'), 'a warning at start names the key');
});
