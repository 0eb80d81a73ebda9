import { test } from 'node:test';
import assert from 'node:assert/strict';
import dnsPacket from 'dns-packet';
import { DecodeStatus, ParsedQuery, decodeQuery, ecsAddressText } from '../../../runtime/dns/wire-query.js';
import { ReplyWriter, nameToWire } from '../../../runtime/dns/wire-reply.js';
import { buildQueryPacket, ecsOptionData } from '../../../runtime/dns/query-packet.js';

const q = (name: string, type = 'A', extra: Record<string, unknown> = {}) =>
  dnsPacket.encode({ type: 'query', id: 42, flags: dnsPacket.RECURSION_DESIRED, questions: [{ name, type: type as 'A', class: 'IN' }], ...extra });

test('decodes name (lower-cased), type, EDNS and ECS', () => {
  const p = new ParsedQuery();
  assert.equal(decodeQuery(q('WwW.Example.TEST'), p), DecodeStatus.Ok);
  assert.equal(p.name, 'www.example.test.');
  assert.equal(p.labels, 3);
  assert.equal(p.qtype, 1);
  assert.equal(p.edns, false);
  assert.equal(decodeQuery(buildQueryPacket('a.b.', 28, '198.51.100.0/22'), p), DecodeStatus.Ok);
  assert.equal(p.qtype, 28);
  assert.equal(p.edns, true);
  assert.equal(p.udpSize, 1232);
  assert.equal(p.hasEcs, true);
  assert.equal(p.ecs.sourcePrefix, 22);
  assert.equal(ecsAddressText(p.ecs), '198.51.100.0');
  assert.equal(decodeQuery(buildQueryPacket('a.b.', 1, '2001:db8:ab00::/40'), p), DecodeStatus.Ok);
  assert.equal(ecsAddressText(p.ecs), '2001:db8:ab00:0:0:0:0:0');
  assert.equal(decodeQuery(q('.'), p), DecodeStatus.Ok);
  assert.equal(p.name, '.');
});

test('bad packets: drop, FORMERR, NOTIMP, BADVERS', () => {
  const p = new ParsedQuery();
  const good = q('www.example.test');
  const response = Buffer.from(good); response[2]! |= 0x80;
  const twoQ = dnsPacket.encode({ type: 'query', id: 1, questions: [{ name: 'a', type: 'A' }, { name: 'b', type: 'A' }] });
  const notify = Buffer.from(good); notify[2] = (notify[2]! & 0x87) | (4 << 3);
  const badEcs = Buffer.from(ecsOptionData('10.0.0.0/8')!); badEcs[3] = 5; // non-zero scope in a query
  const hostBits = Buffer.concat([Buffer.from([0, 1, 8, 0]), Buffer.from([10, 1])]); // 2 address bytes for /8
  const opt = (data: Buffer) => buildWithOpt(data);
  const rows: { name: string; given: Buffer; want: DecodeStatus }[] = [
    { name: 'short', given: Buffer.alloc(5), want: DecodeStatus.Drop },
    { name: 'response', given: response, want: DecodeStatus.Drop },
    { name: 'truncated question', given: good.subarray(0, good.length - 3), want: DecodeStatus.FormErr },
    { name: 'two questions', given: twoQ, want: DecodeStatus.FormErr },
    { name: 'no question', given: good.subarray(0, 12).fill(0, 4, 6), want: DecodeStatus.FormErr },
    { name: 'opcode NOTIFY', given: notify, want: DecodeStatus.NotImp },
    { name: 'ECS with scope set', given: opt(badEcs), want: DecodeStatus.FormErr },
    { name: 'ECS address longer than prefix', given: opt(hostBits), want: DecodeStatus.FormErr },
    { name: 'EDNS version 1', given: dnsPacket.encode({ type: 'query', id: 1, questions: [{ name: 'a', type: 'A' }], additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 4096, extendedRcode: 0, ednsVersion: 1, flags: 0, options: [] } as never] }), want: DecodeStatus.BadVers },
    { name: 'compression pointer in question', given: Buffer.from([0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1]), want: DecodeStatus.FormErr },
  ];
  for (const r of rows) assert.equal(decodeQuery(r.given, p), r.want, r.name);
});

function buildWithOpt(ecs: Buffer): Buffer {
  return dnsPacket.encode({ type: 'query', id: 1, questions: [{ name: 'a.test', type: 'A' }], additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: 0, options: [{ code: 8, data: ecs } as never] } as never] });
}

test('reply: answers, echoed question case, OPT with ECS scope, TC when too large', () => {
  const p = new ParsedQuery();
  const req = buildQueryPacket('WWW.example.test.', 1, '192.0.2.0/24');
  decodeQuery(req, p);
  const w = new ReplyWriter();
  w.begin(req, p, 0, true);
  w.addAnswer(1, 60, Buffer.from([10, 0, 0, 1]));
  w.addAnswer(1, 60, Buffer.from([10, 0, 0, 2]));
  const out = dnsPacket.decode(w.finish(p, 1232, 1232, 24, false));
  assert.equal(out.id, 1);
  assert.equal(out.questions![0]!.name, 'WWW.example.test');
  assert.deepEqual(out.answers!.map((a) => (a as { data: string }).data), ['10.0.0.1', '10.0.0.2']);
  assert.equal((out.flags! & 0x0400) !== 0, true, 'AA set');
  const optRec = out.additionals!.find((a) => a.type === 'OPT') as unknown as { udpPayloadSize: number; options: { code: number; sourcePrefixLength: number; scopePrefixLength: number; ip: string }[] };
  assert.equal(optRec.udpPayloadSize, 1232);
  assert.deepEqual([optRec.options[0]!.sourcePrefixLength, optRec.options[0]!.scopePrefixLength, optRec.options[0]!.ip], [24, 24, '192.0.2.0']);

  w.begin(req, p, 0, true);
  for (let i = 0; i < 100; i++) w.addAnswer(1, 60, Buffer.from([10, 0, 0, i]));
  const big = w.finish(p, 512, 1232, 0, false);
  const tc = dnsPacket.decode(big);
  assert.ok(big.length <= 512);
  assert.equal((tc.flags! & 0x0200) !== 0, true, 'TC set');
  assert.equal(tc.answers!.length, 0);
  w.begin(req, p, 0, true);
  for (let i = 0; i < 100; i++) w.addAnswer(1, 60, Buffer.from([10, 0, 0, i]));
  const viaTcp = w.finish(p, 0, 1232, 0, true);
  assert.equal(viaTcp.readUInt16BE(0), viaTcp.length - 2);
  assert.equal(dnsPacket.decode(viaTcp.subarray(2)).answers!.length, 100, 'TCP carries every record');
});

test('nameToWire encodes labels', () => {
  assert.deepEqual([...nameToWire('ns1.example.test.')], [3, 110, 115, 49, 7, 101, 120, 97, 109, 112, 108, 101, 4, 116, 101, 115, 116, 0]);
  assert.deepEqual([...nameToWire('.')], [0]);
});

test('reply written in place (writeTo): same bytes as the scratch path; a reply that outgrows its slot moves to scratch', () => {
  const p = new ParsedQuery();
  const req = buildQueryPacket('www.example.test.', 1, '192.0.2.0/24');
  decodeQuery(req, p);
  const build = (w: ReplyWriter, answers: number, udpLimit: number) => {
    w.begin(req, p, 0, true);
    for (let i = 0; i < answers; i++) w.addAnswer(1, 60, Buffer.from([10, 0, 0, i]));
    return w.seal(p, udpLimit, 1232, 24);
  };
  const want = (answers: number, udpLimit: number) => {
    const w = new ReplyWriter();
    build(w, answers, udpLimit);
    return w.copyOut(false);
  };
  const rows = [
    { name: 'fits the slot', answers: 3, udpLimit: 1232, max: 512, inPlace: true },
    { name: 'outgrows the slot', answers: 30, udpLimit: 1232, max: 200, inPlace: false },
    { name: 'outgrows the slot, then truncated (TC) to fit it', answers: 200, udpLimit: 1232, max: 600, inPlace: false },
  ];
  for (const r of rows) {
    const out = Buffer.alloc(2048, 0xee);
    const at = 700;
    const w = new ReplyWriter();
    w.writeTo(out, at, r.max);
    const n = build(w, r.answers, r.udpLimit);
    const expected = want(r.answers, r.udpLimit);
    assert.equal(w.inPlace, r.inPlace, r.name);
    assert.equal(n, expected.length, r.name);
    assert.deepEqual(w.sealed(), expected, r.name);
    assert.ok(out.subarray(0, at).every((b) => b === 0xee), `${r.name}: nothing written before the slot`);
    assert.ok(out.subarray(at + r.max).every((b) => b === 0xee), `${r.name}: nothing written past the slot`);
    if (r.inPlace) assert.deepEqual(out.subarray(at, at + n), expected, r.name);
    else assert.equal(w.copyInto(out, at, r.max), expected.length <= r.max ? expected.length : -1, r.name);
    // Back to the scratch buffer: the next reply leaves `out` alone.
    w.writeToScratch();
    const before = Buffer.from(out);
    build(w, 2, 1232);
    assert.deepEqual(out, before, `${r.name}: writeToScratch`);
  }
});
