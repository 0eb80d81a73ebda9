import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BgpProtocolError } from '../../../runtime/bgp/errors.js';
import { checkHeader, decodeNotification, encodeKeepalive, encodeNotification, frameMessage, FrameReader, MsgType } from '../../../runtime/bgp/header.js';
import { AS_TRANS, decodeOpen, encodeOpen, peerAsOf } from '../../../runtime/bgp/open.js';
import { decodePrefixes4, encodePrefix4, formatPrefix4, parsePrefix4 } from '../../../runtime/bgp/prefix.js';
import { Attr, decodeUpdate, encodeAttributes, encodeUpdates, updateMessage } from '../../../runtime/bgp/update.js';

const P = (s: string) => parsePrefix4(s)!;
const codeOf = (fn: () => unknown): [number, number] | undefined => {
  try { fn(); return undefined; } catch (e) {
    if (e instanceof BgpProtocolError) return [e.code, e.subcode];
    throw e;
  }
};

test('prefixes: parse, format, NLRI encoding in the fewest bytes', () => {
  const rows: { given: string; want: string | undefined; bytes?: number[] }[] = [
    { given: '10.0.0.0/8', want: '10.0.0.0/8', bytes: [8, 10] },
    { given: '203.0.113.0/24', want: '203.0.113.0/24', bytes: [24, 203, 0, 113] },
    { given: '192.0.2.64/26', want: '192.0.2.64/26', bytes: [26, 192, 0, 2, 64] },
    { given: '0.0.0.0/0', want: '0.0.0.0/0', bytes: [0] },
    { given: '192.0.2.1/32', want: '192.0.2.1/32', bytes: [32, 192, 0, 2, 1] },
    { given: '192.0.2.1/24', want: undefined },
    { given: '2001:db8::/32', want: undefined },
    { given: '300.0.0.0/8', want: undefined },
    { given: '10.0.0.0/33', want: undefined },
  ];
  for (const r of rows) {
    const p = parsePrefix4(r.given);
    assert.equal(p && formatPrefix4(p), r.want, r.given);
    if (p && r.bytes) {
      assert.deepEqual([...encodePrefix4(p)], r.bytes, r.given);
      assert.deepEqual(decodePrefixes4(encodePrefix4(p)).map(formatPrefix4), [r.want], r.given);
    }
  }
  // trailing bits beyond the length are irrelevant (RFC 4271 §4.3)
  assert.deepEqual(decodePrefixes4(Buffer.from([24, 10, 1, 2, 24, 10, 1, 3])).map(formatPrefix4), ['10.1.2.0/24', '10.1.3.0/24']);
  assert.deepEqual(decodePrefixes4(Buffer.from([20, 10, 1, 255])).map(formatPrefix4), ['10.1.240.0/20']);
  assert.deepEqual(codeOf(() => decodePrefixes4(Buffer.from([33, 1, 2, 3, 4, 5]))), [3, 10]);
  assert.deepEqual(codeOf(() => decodePrefixes4(Buffer.from([24, 10, 1]))), [3, 10]);
});

test('header checks: marker, length per type, type', () => {
  const h = (len: number, type: number, marker = 0xff) => { const b = Buffer.alloc(19, marker); b.writeUInt16BE(len, 16); b.writeUInt8(type, 18); return b; };
  const rows: { name: string; given: Buffer; want: [number, number] | undefined }[] = [
    { name: 'keepalive', given: h(19, 4), want: undefined },
    { name: 'bad marker', given: h(19, 4, 0xfe), want: [1, 1] },
    { name: 'length 18', given: h(18, 4), want: [1, 2] },
    { name: 'length 4097', given: h(4097, 2), want: [1, 2] },
    { name: 'keepalive of 20', given: h(20, 4), want: [1, 2] },
    { name: 'open of 28', given: h(28, 1), want: [1, 2] },
    { name: 'update of 22', given: h(22, 2), want: [1, 2] },
    { name: 'notification of 20', given: h(20, 3), want: [1, 2] },
    { name: 'type 0', given: h(19, 0), want: [1, 3] },
    { name: 'route refresh not advertised', given: h(23, 5), want: [1, 3] },
  ];
  for (const r of rows) assert.deepEqual(codeOf(() => checkHeader(r.given)), r.want, r.name);
});

test('frame reader: split and joined chunks give whole messages', () => {
  const msgs = Buffer.concat([encodeKeepalive(), encodeNotification(6, 2, Buffer.from([1, 2])), encodeKeepalive()]);
  const r = new FrameReader();
  const got = [];
  for (let i = 0; i < msgs.length; i += 7) got.push(...r.push(msgs.subarray(i, i + 7)));
  assert.deepEqual(got.map((m) => m.type), [4, 3, 4]);
  assert.deepEqual(decodeNotification(got[1]!.body), { code: 6, subcode: 2, data: Buffer.from([1, 2]) });
});

test('OPEN: 2-byte and 4-byte ASNs, capabilities, errors', () => {
  const small = decodeOpen(encodeOpen({ asn: 65010, holdTime: 90, routerId: '192.0.2.1' }).subarray(19));
  assert.deepEqual([small.version, small.myAs, small.holdTime, small.bgpId, small.fourOctetAs, small.families], [4, 65010, 90, '192.0.2.1', 65010, ['1/1']]);
  const big = decodeOpen(encodeOpen({ asn: 4200000001, holdTime: 0, routerId: '10.0.0.1' }).subarray(19));
  assert.deepEqual([big.myAs, big.fourOctetAs, peerAsOf(big)], [AS_TRANS, 4200000001, 4200000001]);
  const body = (bytes: number[]) => Buffer.from(bytes);
  const rows: { name: string; given: Buffer; want: [number, number] | undefined }[] = [
    { name: 'no parameters', given: body([4, 0xfd, 0xe8, 0, 90, 10, 0, 0, 1, 0]), want: undefined },
    { name: 'version 3', given: body([3, 0xfd, 0xe8, 0, 90, 10, 0, 0, 1, 0]), want: [2, 1] },
    { name: 'identifier 0', given: body([4, 0xfd, 0xe8, 0, 90, 0, 0, 0, 0, 0]), want: [2, 3] },
    { name: 'parameter length past the message', given: body([4, 0xfd, 0xe8, 0, 90, 10, 0, 0, 1, 4, 2, 2]), want: [2, 0] },
    { name: 'parameter type 1', given: body([4, 0xfd, 0xe8, 0, 90, 10, 0, 0, 1, 4, 1, 2, 0, 0]), want: [2, 4] },
    { name: 'unknown capability ignored', given: body([4, 0xfd, 0xe8, 0, 90, 10, 0, 0, 1, 5, 2, 3, 99, 1, 0]), want: undefined },
    { name: '4-octet capability of length 2', given: body([4, 0xfd, 0xe8, 0, 90, 10, 0, 0, 1, 6, 2, 4, 65, 2, 0, 1]), want: [2, 0] },
  ];
  for (const r of rows) assert.deepEqual(codeOf(() => decodeOpen(r.given)), r.want, r.name);
});

test('UPDATE: our attributes round-trip, AS_TRANS and AS4_PATH towards a 2-byte peer, packing within 4096 bytes', () => {
  const [msg] = encodeUpdates([P('10.9.0.0/16')], [P('203.0.113.0/24'), P('198.51.100.0/24')], { asPath: [4200000001], nextHop: '192.0.2.1' }, true);
  const u = decodeUpdate(msg!.subarray(19), true);
  assert.deepEqual(u.withdrawn.map(formatPrefix4), ['10.9.0.0/16']);
  assert.equal(u.nlri.length, 0, 'withdrawals travel alone');
  const [, ann] = encodeUpdates([P('10.9.0.0/16')], [P('203.0.113.0/24'), P('198.51.100.0/24')], { asPath: [4200000001], nextHop: '192.0.2.1' }, true);
  const a = decodeUpdate(ann!.subarray(19), true);
  assert.deepEqual([a.nlri.map(formatPrefix4), a.origin, a.asPath, a.nextHop, a.attrTypes], [['203.0.113.0/24', '198.51.100.0/24'], 0, [[4200000001]], '192.0.2.1', [1, 2, 3]]);

  // without 4-octet AS: AS_TRANS in AS_PATH and the real path in AS4_PATH (RFC 6793 §4.2.2)
  const old = decodeUpdate(encodeUpdates([], [P('203.0.113.0/24')], { asPath: [4200000001], nextHop: '192.0.2.1' }, false)[0]!.subarray(19), false);
  assert.deepEqual([old.asPath, old.attrTypes], [[[AS_TRANS]], [1, 2, 3, Attr.As4Path]]);
  // iBGP: empty AS_PATH and LOCAL_PREF
  const ibgp = decodeUpdate(encodeUpdates([], [P('203.0.113.0/24')], { asPath: [], nextHop: '192.0.2.1', localPref: 100 }, true)[0]!.subarray(19), true);
  assert.deepEqual([ibgp.asPath, ibgp.localPref], [[], 100]);
  assert.deepEqual([...encodeAttributes({ asPath: [], nextHop: '1.2.3.4' }, true).subarray(0, 7)], [0x40, 1, 1, 0, 0x40, 2, 0]);

  // 1000 /32s do not fit in one message: several, each at most 4096 bytes, nothing lost
  const many = Array.from({ length: 1000 }, (_, i) => P(`10.0.${i >> 8}.${i & 255}/32`));
  const msgs = encodeUpdates([], many, { asPath: [65010], nextHop: '192.0.2.1' }, true);
  assert.ok(msgs.length > 1 && msgs.every((m) => m.length <= 4096));
  assert.equal(msgs.flatMap((m) => decodeUpdate(m.subarray(19), true).nlri).length, 1000);
  assert.equal(frameMessage(MsgType.Keepalive).length, 19);
});

test('UPDATE errors: the subcodes of RFC 4271 §6.3', () => {
  const upd = (attrs: number[], nlri: number[] = []) => updateMessage(Buffer.alloc(0), Buffer.from(attrs), Buffer.from(nlri)).subarray(19);
  const ORIGIN = [0x40, 1, 1, 0];
  const AS_PATH2 = [0x40, 2, 4, 2, 1, 0xfd, 0xe8];
  const NH = [0x40, 3, 4, 192, 0, 2, 1];
  const N = [24, 10, 1, 2];
  const rows: { name: string; given: Buffer; four?: boolean; want: [number, number] | undefined }[] = [
    { name: 'complete announcement', given: upd([...ORIGIN, ...AS_PATH2, ...NH], N), want: undefined },
    { name: 'unknown optional attribute skipped', given: upd([...ORIGIN, ...AS_PATH2, ...NH, 0xc0, 200, 2, 1, 2], N), want: undefined },
    { name: 'MED of length 4 accepted', given: upd([...ORIGIN, ...AS_PATH2, ...NH, 0x80, 4, 4, 0, 0, 0, 5], N), want: undefined },
    { name: 'withdrawn length past the message', given: Buffer.from([0, 9, 0, 0]), want: [3, 1] },
    { name: 'attribute length past the list', given: upd([0x40, 1, 3, 0]), want: [3, 1] },
    { name: 'truncated attribute header', given: upd([0x40, 1]), want: [3, 1] },
    { name: 'duplicate attribute', given: upd([...ORIGIN, ...ORIGIN]), want: [3, 1] },
    { name: 'unrecognised well-known', given: upd([0x40, 42, 0]), want: [3, 2] },
    { name: 'missing ORIGIN', given: upd([...AS_PATH2, ...NH], N), want: [3, 3] },
    { name: 'partial flag on well-known', given: upd([0x60, 1, 1, 0]), want: [3, 4] },
    { name: 'NEXT_HOP of length 3', given: upd([0x40, 3, 3, 1, 2, 3]), want: [3, 5] },
    { name: 'MED of length 2', given: upd([0x80, 4, 2, 0, 0]), want: [3, 5] },
    { name: 'ORIGIN 3', given: upd([0x40, 1, 1, 3]), want: [3, 6] },
    { name: 'NEXT_HOP 0.0.0.0', given: upd([0x40, 3, 4, 0, 0, 0, 0]), want: [3, 8] },
    { name: 'NEXT_HOP multicast', given: upd([0x40, 3, 4, 224, 0, 0, 1]), want: [3, 8] },
    { name: 'NLRI length 40', given: upd([...ORIGIN, ...AS_PATH2, ...NH], [40, 1, 2, 3, 4, 5]), want: [3, 10] },
    { name: 'AS_PATH segment type 9', given: upd([0x40, 2, 4, 9, 1, 0, 1]), want: [3, 11] },
    { name: '2-byte AS_PATH read as 4-byte', given: upd([...ORIGIN, ...AS_PATH2, ...NH], N), four: true, want: [3, 11] },
  ];
  for (const r of rows) assert.deepEqual(codeOf(() => decodeUpdate(r.given, r.four ?? false)), r.want, r.name);
});
