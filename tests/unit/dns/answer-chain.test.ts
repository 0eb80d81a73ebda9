import { test } from 'node:test';
import assert from 'node:assert/strict';
import dnsPacket from 'dns-packet';
import { validateConfigObject } from '../../../runtime/config/load.js';
import { NO_RUM } from '../../../runtime/balancer/types.js';
import { Answerer, type AnswerDeps } from '../../../runtime/dns/answer.js';
import { addDnsStep, PASS, type DnsStep, type QueryScope } from '../../../runtime/dns/port.js';
import { takeDnsSteps } from '../../../runtime/dns/step-registry.js';
import { HealthView } from '../../../runtime/ports/health-view.js';
import { emptySnapshot } from '../../../core/snapshot/snapshot.js';
import type { Ports } from '../../../runtime/ports/parts.js';

const snapshot = emptySnapshot();
function answerer(dns: Record<string, unknown>, extra: Partial<AnswerDeps> = {}): Answerer {
  const config = validateConfigObject({ dns: { domain: 'example.test', ...dns } });
  return new Answerer({
    config, health: new HealthView(), snapshot: () => snapshot, serial: () => 1, rand: Math.random, rum: NO_RUM,
    geo: { city: undefined, asn: undefined, endpointLocations: {} }, versionTxt: () => Buffer.from([1, 0x31]), ...extra,
  });
}
const query = (name: string, type: string, cls = 'IN') =>
  Buffer.from(dnsPacket.encode({ type: 'query', id: 7, questions: [{ name, type: type as 'A', class: cls as 'IN' }] }));
const decode = (b: ReturnType<Answerer['handle']>) => dnsPacket.decode(b as Buffer);
/** The response code of a reply (the low 4 bits of its flags). */
const rcodeOf = (b: ReturnType<Answerer['handle']>) => (b as Buffer).readUInt16BE(2) & 0xf;

test('the chain in order: switched-off steps are left out, the service step is last', () => {
  assert.deepEqual(answerer({}).steps.map((s) => s.name), ['malformed', 'chaos', 'refuse', 'zone', 'service']);
  assert.deepEqual(answerer({ versionName: '' }).steps.map((s) => s.name), ['malformed', 'refuse', 'zone', 'service']);
  const feature: DnsStep = { name: 'mine', answer: () => PASS };
  const transfer: DnsStep = { name: 'transfer', answer: () => PASS };
  assert.deepEqual(answerer({}, { steps: [feature], transfer }).steps.map((s) => s.name), ['mine', 'malformed', 'transfer', 'chaos', 'refuse', 'zone', 'service']);
});

test('a feature step is asked first and may answer; passing leaves the query to the built-in steps', () => {
  let asked = 0;
  const mine: DnsStep = {
    name: 'mine',
    answer(x: QueryScope) {
      asked++;
      return x.q.name === 'mine.example.test.' ? x.reply(4) : PASS;
    },
  };
  const a = answerer({}, { steps: [mine] });
  assert.equal(rcodeOf(a.handle(query('mine.example.test', 'A'), '127.0.0.1', true, false)), 4);
  assert.equal(a.lastRcode, 4);
  const soa = decode(a.handle(query('example.test', 'SOA'), '127.0.0.1', true, false));
  assert.equal(a.lastRcode, 0);
  assert.equal(soa.answers?.[0]?.type, 'SOA');
  assert.equal(decode(a.handle(query('version.gslb', 'TXT', 'CH'), '127.0.0.1', true, false)).answers?.[0]?.type, 'TXT');
  assert.equal(rcodeOf(a.handle(query('elsewhere.invalid', 'A'), '127.0.0.1', true, false)), 5);
  assert.equal(asked, 4);
});

test('addDnsStep: steps are built once, in the order added; adding once the chain is built throws', () => {
  const core = { ports: {} as Ports };
  const built: string[] = [];
  addDnsStep(core, () => { built.push('one'); return { name: 'one', answer: () => PASS }; });
  addDnsStep(core, (env) => { built.push('two'); return { name: env.servesZone('example.test.') ? 'two' : 'none', answer: () => PASS }; });
  const steps = takeDnsSteps(core, { servesZone: (z) => z === 'example.test.' });
  assert.deepEqual(steps.map((s) => s.name), ['one', 'two']);
  assert.deepEqual(built, ['one', 'two']);
  assert.throws(() => addDnsStep(core, () => ({ name: 'late', answer: () => PASS })), /after the DNS part set up/);
});
