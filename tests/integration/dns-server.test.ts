import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import dnsPacket from 'dns-packet';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { dig, makeService, untilAnswers } from '../helpers/dns-tools.js';

let d: TestDaemon;
let port: number;
let web: Awaited<ReturnType<typeof makeService>>;

before(async () => {
  d = await startTestDaemon({ dns: { listenAddr: '127.0.0.1', port: 0, domain: 'example.test', queryLog: true, nsNames: ['ns1.example.test.', 'ns2.example.test.'] } as never });
  port = d.ports.dnsPort as number;
  web = await makeService(d, { name: 'web', domain: 'www.example.test.', ttl: 120 }, [{ ipAddress: '192.0.2.1' }, { ipAddress: '192.0.2.2' }, { ipAddress: '2001:db8::1' }]);
  await makeService(d, { name: 'v4only', domain: 'deep.sub.example.test.' }, [{ ipAddress: '192.0.2.9' }]);
  await makeService(d, { name: 'outside', domain: 'app.other.test.' }, [{ ipAddress: '198.51.100.7' }]);
  await makeService(d, { name: 'big', domain: 'big.example.test.' }, Array.from({ length: 120 }, (_, i) => ({ ipAddress: `10.1.${i >> 8}.${i & 255}` })));
});
after(async () => { await d?.stop(); });

test('A and AAAA from the pool with the service ttl, over UDP and TCP, with dig and kdig', async () => {
  const rows = [
    { args: ['www.example.test', 'A'], want: ['192.0.2.1', '192.0.2.2'] },
    { args: ['WWW.Example.Test', 'A', '+tcp'], want: ['192.0.2.1', '192.0.2.2'] },
    { args: ['www.example.test', 'AAAA'], want: ['2001:db8::1'] },
    { args: ['app.other.test', 'A', '+tcp'], want: ['198.51.100.7'] },
  ];
  for (const r of rows) {
    const res = await dig(port, r.args);
    assert.equal(res.status, 'NOERROR', r.args.join(' '));
    assert.ok(res.flags.includes('aa'), 'authoritative');
    assert.deepEqual([...res.answers].sort(), r.want, r.args.join(' '));
  }
  assert.match((await dig(port, ['www.example.test', 'A'])).text, /www\.example\.test\.\s+120\s+IN\s+A/);
  const k = await dig(port, ['www.example.test', 'A', '+tcp'], 'kdig');
  assert.equal(k.status, 'NOERROR');
  assert.equal(k.answers.length, 2);
});

test('round-robin rotates the first answer across queries', async () => {
  const firsts = new Set<string>();
  for (let i = 0; i < 4; i++) firsts.add((await dig(port, ['www.example.test', 'A'])).answers[0]!);
  assert.equal(firsts.size, 2);
});

test('SOA and NS at the apex; NXDOMAIN, NODATA and REFUSED', async () => {
  const soa = await dig(port, ['example.test', 'SOA']);
  assert.equal(soa.status, 'NOERROR');
  assert.match(soa.answers[0]!, /^ns1\.example\.test\. hostmaster\.example\.test\. \d+ 3600 600 604800 60$/);
  assert.deepEqual((await dig(port, ['example.test', 'NS'])).answers.sort(), ['ns1.example.test.', 'ns2.example.test.']);
  const rows = [
    { name: 'unknown name in zone', args: ['nope.example.test', 'A'], status: 'NXDOMAIN', soa: true },
    { name: 'below a service name', args: ['x.www.example.test', 'A'], status: 'NXDOMAIN', soa: true },
    { name: 'type without data', args: ['www.example.test', 'TXT'], status: 'NOERROR', soa: true },
    { name: 'AAAA of an IPv4-only service', args: ['deep.sub.example.test', 'AAAA'], status: 'NOERROR', soa: true },
    { name: 'empty non-terminal', args: ['sub.example.test', 'A'], status: 'NOERROR', soa: true },
    { name: 'apex A with no static endpoints', args: ['example.test', 'A'], status: 'NOERROR', soa: true },
    { name: 'outside every zone', args: ['www.example.org', 'A'], status: 'REFUSED', soa: false },
    { name: 'parent of a served name', args: ['other.test', 'A'], status: 'REFUSED', soa: false },
    { name: 'CHAOS class', args: ['version.bind', 'TXT', 'CH'], status: 'REFUSED', soa: false },
  ];
  for (const r of rows) {
    const res = await dig(port, r.args);
    assert.equal(res.status, r.name === 'CHAOS class' ? 'REFUSED' : r.status, r.name);
    assert.equal(res.answers.length, 0, r.name);
    assert.equal(/AUTHORITY SECTION:\n\S+\s+60\s+IN\s+SOA/.test(res.text), r.soa, `${r.name}: SOA in authority`);
  }
});

test('EDNS: payload size advertised; too large over UDP sets TC and dig retries over TCP', async () => {
  const plain = await dig(port, ['www.example.test', 'A']);
  assert.match(plain.text, /EDNS: version: 0, flags:; udp: 1232/);
  const noRetry = await dig(port, ['big.example.test', 'A', '+ignore']);
  assert.ok(noRetry.flags.includes('tc'), 'TC set over UDP');
  assert.equal(noRetry.answers.length, 0);
  const retried = await dig(port, ['big.example.test', 'A']);
  assert.match(retried.text, /Truncated, retrying in TCP mode/);
  assert.equal(retried.answers.length, 120);
  const noEdns = await dig(port, ['www.example.test', 'A', '+noedns']);
  assert.equal(noEdns.status, 'NOERROR');
  assert.doesNotMatch(noEdns.text, /OPT PSEUDOSECTION/);
});

test('EDNS Client Subnet is echoed with a scope prefix', async () => {
  const rr = await dig(port, ['www.example.test', 'A', '+subnet=203.0.113.0/24']);
  assert.equal(rr.ecs, '203.0.113.0/24/0', 'round-robin does not depend on the subnet: scope 0');
  const v6 = await dig(port, ['www.example.test', 'A', '+subnet=2001:db8:1::/48']);
  assert.equal(v6.ecs, '2001:db8:1::/48/0');
});

test('health: unhealthy members are left out; all unhealthy follows whenAllUnhealthy', async () => {
  const mark = (ip: string, healthy: boolean) => d.core.health.set(web.poolId, ip, { healthy, score: healthy ? 1 : 0, lastChecked: Date.now(), rttMs: 1, node: 'test-node' });
  // untilAnswers: a verdict reaches the DNS worker threads on a later turn
  mark('192.0.2.1', false);
  await untilAnswers(port, ['www.example.test', 'A'], ['192.0.2.2'], 'the unhealthy member left out');
  for (let i = 0; i < 3; i++) assert.deepEqual((await dig(port, ['www.example.test', 'A'])).answers, ['192.0.2.2']);
  mark('192.0.2.2', false);
  await untilAnswers(port, ['www.example.test', 'A'], ['192.0.2.1', '192.0.2.2'], 'default: all enabled members', true);
  const put = async (p: string) => {
    const cur = await api(d.url, 'GET', `/api/v1/services/${web.serviceId}`);
    const r = await api(d.url, 'PUT', `/api/v1/services/${web.serviceId}`, { name: cur.body.name, domain: cur.body.domain, poolId: web.poolId, ttl: 120, whenAllUnhealthy: p });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  };
  await put('nodata');
  const nd = await dig(port, ['www.example.test', 'A']);
  assert.equal(nd.status, 'NOERROR');
  assert.equal(nd.answers.length, 0);
  await put('servfail');
  assert.equal((await dig(port, ['www.example.test', 'A'])).status, 'SERVFAIL');
  mark('192.0.2.2', true);
  await untilAnswers(port, ['www.example.test', 'A'], ['192.0.2.2'], 'the recovered member');
  mark('192.0.2.1', true);
  await put('all');
});

test('disabled members are not answered', async () => {
  const s = await makeService(d, { name: 'dis', domain: 'dis.example.test.' }, [{ ipAddress: '192.0.2.31' }, { ipAddress: '192.0.2.32' }]);
  await api(d.url, 'PUT', `/api/v1/members/${s.memberIds[0]}`, { enabled: false });
  for (let i = 0; i < 3; i++) assert.deepEqual((await dig(port, ['dis.example.test', 'A'])).answers, ['192.0.2.32']);
  await api(d.url, 'PUT', `/api/v1/members/${s.memberIds[0]}`, { enabled: true });
  assert.equal((await dig(port, ['dis.example.test', 'A'])).answers.length, 2, 'created and updated members are answered at once');
});

async function udpExchange(msg: Buffer, timeoutMs = 500): Promise<Buffer | undefined> {
  const s = createSocket('udp4');
  try {
    return await new Promise<Buffer | undefined>((resolve) => {
      const t = setTimeout(() => resolve(undefined), timeoutMs);
      s.on('message', (m) => { clearTimeout(t); resolve(m); });
      s.send(msg, port, '127.0.0.1');
    });
  } finally { s.close(); }
}

test('malformed packets get FORMERR, NOTIMP or nothing', async () => {
  const two = dnsPacket.encode({ type: 'query', id: 7, questions: [{ name: 'a.example.test', type: 'A' }, { name: 'b.example.test', type: 'A' }] });
  const r1 = await udpExchange(two);
  assert.ok(r1);
  assert.equal(r1!.readUInt16BE(0), 7);
  assert.equal(r1!.readUInt16BE(2) & 0xf, 1, 'FORMERR');
  const notify = Buffer.from(dnsPacket.encode({ type: 'query', id: 8, questions: [{ name: 'www.example.test', type: 'SOA' }] }));
  notify[2] = (4 << 3);
  assert.equal((await udpExchange(notify))!.readUInt16BE(2) & 0xf, 4, 'NOTIMP');
  assert.equal(await udpExchange(Buffer.from([1, 2, 3]), 300), undefined, 'runt dropped');
  const vers = await dig(port, ['www.example.test', 'A', '+edns=1', '+noednsneg']);
  assert.equal(vers.status, 'BADVERS');
});

test('query log: one line per response with name, type, src, rcode, answers, duration_us', async () => {
  await dig(port, ['www.example.test', 'AAAA']);
  const line = [...d.logs.lines].reverse().find((l) => l.msg === 'dns query' && l.type === 'AAAA');
  assert.ok(line);
  assert.equal(line!.name, 'www.example.test.');
  assert.equal(line!.src, '127.0.0.1');
  assert.equal(line!.rcode, 'NOERROR');
  assert.deepEqual(line!.answers, ['2001:db8::1']);
  assert.equal(typeof line!.duration_us, 'number');
});

test('metrics: queries by type and rcode, and the duration histogram', async () => {
  await dig(port, ['nope.example.test', 'A']);
  const text = await d.core.metrics.metrics();
  assert.match(text, /gslbd_dns_queries_total\{type="A",rcode="NOERROR",cluster="[^"]*",node="test-node"\} [1-9]/);
  assert.match(text, /gslbd_dns_queries_total\{type="A",rcode="NXDOMAIN"[^}]*\} [1-9]/);
  assert.match(text, /gslbd_dns_queries_total\{type="A",rcode="REFUSED"[^}]*\} [1-9]/);
  const count = Number(/gslbd_dns_query_duration_seconds_count\{[^}]*\} (\d+)/.exec(text)?.[1]);
  const inf = Number(/gslbd_dns_query_duration_seconds_bucket\{le="\+Inf"[^}]*\} (\d+)/.exec(text)?.[1]);
  assert.ok(count > 10);
  assert.equal(inf, count);
});

test('AXFR and IXFR: REFUSED while dns.axfr.enabled is false, over TCP and UDP (tests/integration/dns-axfr.test.ts has the rest)', async () => {
  const refused = await dig(port, ['example.test', 'AXFR']);
  assert.match(refused.text, /Transfer failed|REFUSED/);
  assert.doesNotMatch(refused.text, /www\.example\.test\.\s+\d+\s+IN\s+A/);
  const overUdp = await udpExchange(dnsPacket.encode({ type: 'query', id: 9, questions: [{ name: 'example.test', type: 'AXFR' }] }));
  assert.equal(overUdp!.readUInt16BE(2) & 0xf, 5, 'AXFR over UDP is REFUSED');
  const ixfr = await udpExchange(dnsPacket.encode({ type: 'query', id: 10, questions: [{ name: 'example.test', type: 'IXFR' }] }));
  assert.equal(ixfr!.readUInt16BE(2) & 0xf, 5, 'IXFR over UDP is REFUSED');
});
