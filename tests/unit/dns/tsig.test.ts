import { test } from 'node:test';
import assert from 'node:assert/strict';
import dnsPacket from 'dns-packet';
import {
  TSIG_ERROR, TsigStreamSigner, appendTsig, parseTsig, signRequest, signResponse, tsigErrorRecord, tsigKeyring, verifyRequest,
  verifyResponseStream, lastRecordStart, type TsigKey, type TsigKeyring,
} from '../../../runtime/dns/tsig.js';
import { DecodeStatus, ParsedQuery, decodeQuery } from '../../../runtime/dns/wire-query.js';

/**
 * Requests signed by a real client: `dig -y <alg>:<name>:<secret> +qid=4660` (BIND 9.18) sent to
 * a UDP socket and captured as hex, with the Time Signed dig wrote (seconds). These are the
 * independent vectors: this module must verify what BIND signs, at the time it signed it.
 */
const SECRET256 = 'Z3NsYmQtdHNpZy10ZXN0LWtleS0yNTYtYml0cyEhISE=';
const SECRET512 = 'Z3NsYmQtdHNpZy10ZXN0LWtleS1mb3ItaG1hYy1zaGE1MTItc2l4dHktZm91ci1ieXRlcy1sb25nISEhISEh';
const SECRET1 = 'Z3NsYmQtc2hhMS1rZXktMjBieQ==';
const DIG = {
  /** example.test SOA, +noedns, hmac-sha256, key xfr.example.test */
  sha256: { hex: '123401200001000000000001076578616d706c650474657374000006000103786672076578616d706c6504746573740000fa00ff00000000003d0b686d61632d7368613235360000006b058685012c0020158fdc098c58f748a9a10bb695e717dcb5340d35d80d6f24b7723aef0f16fcaf123400000000', time: 0x6b058685 },
  /** example.test NS with EDNS (a cookie), hmac-sha512, key xfr512.example.test */
  sha512: { hex: '123401200001000000000002076578616d706c650474657374000002000100002904d000000000000c000a0008b5e4db59f93633b706786672353132076578616d706c6504746573740000fa00ff00000000005d0b686d61632d7368613531320000006b058686012c00401e4b2d2a4063a6a0edce87eedb5be681e07026334ee4a40ddbc12997b180b8f44ac3332c88d649d829c4afcad8965306b920ddb17b38699e76e73e09374d16a9123400000000', time: 0x6b058686 },
  /** www.example.test A with EDNS, hmac-sha1, key xfr1.example.test */
  /**
   * example.test SOA, +noedns, hmac-sha256, key xfr.example.test, signed by dnspython 2.3
   * (`make_query` + `use_tsig`): its TSIG owner name is compressed, `xfr` then a pointer to the
   * question's `example.test` (RFC 8945 §4.2 says it should not be; certbot's RFC 2136 plugin sends it so)
   */
  dnspython: { hex: '123401000001000000000001076578616d706c650474657374000006000103786672c00c00fa00ff00000000003d0b686d61632d7368613235360000006b0acb93012c002036aa49ebb039dd6052ff651c5fd57f8a4ed8c8cb5ddfdff800badd7b686ef69a123400000000', time: 0x6b0acb93 },
  sha1: { hex: '12340120000100000000000203777777076578616d706c650474657374000001000100002904d000000000000c000a0008fdcda06095422df40478667231076578616d706c6504746573740000fa00ff00000000002f09686d61632d736861310000006b058687012c001478ba798374ade43a9036bd070621ff26f282eb4b123400000000', time: 0x6b058687 },
};
const KEYS = tsigKeyring([
  { name: 'xfr.example.test', algorithm: 'hmac-sha256', secret: SECRET256 },
  { name: 'XFR512.example.test.', algorithm: 'hmac-sha512', secret: SECRET512 },
  { name: 'xfr1.example.test', algorithm: 'hmac-sha1', secret: SECRET1 },
]);

/** The TSIG offset the decoder finds (the decoder is what the server uses to locate it). */
function tsigAt(msg: Buffer): number {
  const q = new ParsedQuery();
  assert.equal(decodeQuery(msg, q), DecodeStatus.Ok);
  return q.tsigAt;
}

function verdict(msg: Buffer, keys: TsigKeyring, now: number): string {
  const v = verifyRequest(msg, tsigAt(msg), keys, now);
  if (v.ok) return `ok ${v.key.name}`;
  if (v.rcode === 1) return 'FORMERR';
  return `NOTAUTH ${Object.entries(TSIG_ERROR).find(([, c]) => c === v.error)![0]}${v.key ? ' (key known)' : ''}`;
}

const flip = (b: Buffer, at: number) => { const c = Buffer.from(b); c[at]! ^= 0x01; return c; };

test('verifyRequest: requests signed by dig, and what tampering or the clock does to them', () => {
  const other = tsigKeyring([{ name: 'xfr.example.test', algorithm: 'hmac-sha256', secret: Buffer.from('another-secret-of-32-bytes-long!').toString('base64') }]);
  const wrongAlg = tsigKeyring([{ name: 'xfr.example.test', algorithm: 'hmac-sha512', secret: SECRET256 }]);
  const s256 = Buffer.from(DIG.sha256.hex, 'hex');
  const macAt = s256.length - 6 - 32; // the MAC sits before Original ID, Error and Other Len
  const rows: { name: string; given: { msg: Buffer; keys: TsigKeyring; now: number }; want: string }[] = [
    { name: 'hmac-sha256 at its time', given: { msg: s256, keys: KEYS, now: DIG.sha256.time }, want: 'ok xfr.example.test.' },
    { name: 'hmac-sha512 (key name in another case in the config)', given: { msg: Buffer.from(DIG.sha512.hex, 'hex'), keys: KEYS, now: DIG.sha512.time }, want: 'ok xfr512.example.test.' },
    { name: 'hmac-sha256 by dnspython, the owner name compressed', given: { msg: Buffer.from(DIG.dnspython.hex, 'hex'), keys: KEYS, now: DIG.dnspython.time }, want: 'ok xfr.example.test.' },
    { name: 'hmac-sha1', given: { msg: Buffer.from(DIG.sha1.hex, 'hex'), keys: KEYS, now: DIG.sha1.time }, want: 'ok xfr1.example.test.' },
    { name: 'at the edge of the fudge (300 s later)', given: { msg: s256, keys: KEYS, now: DIG.sha256.time + 300 }, want: 'ok xfr.example.test.' },
    { name: 'past the fudge', given: { msg: s256, keys: KEYS, now: DIG.sha256.time + 301 }, want: 'NOTAUTH BADTIME (key known)' },
    { name: 'before the fudge', given: { msg: s256, keys: KEYS, now: DIG.sha256.time - 301 }, want: 'NOTAUTH BADTIME (key known)' },
    { name: 'question tampered with', given: { msg: flip(s256, 14), keys: KEYS, now: DIG.sha256.time }, want: 'NOTAUTH BADSIG' },
    { name: 'ID changed (Original ID keeps the signed one)', given: { msg: flip(s256, 1), keys: KEYS, now: DIG.sha256.time }, want: 'ok xfr.example.test.' },
    { name: 'MAC tampered with', given: { msg: flip(s256, macAt + 5), keys: KEYS, now: DIG.sha256.time }, want: 'NOTAUTH BADSIG' },
    { name: 'Time Signed changed (it is signed too)', given: { msg: flip(s256, macAt - 6 - 1), keys: KEYS, now: DIG.sha256.time }, want: 'NOTAUTH BADSIG' },
    { name: 'wrong secret', given: { msg: s256, keys: other, now: DIG.sha256.time }, want: 'NOTAUTH BADSIG' },
    { name: 'unknown key name', given: { msg: s256, keys: tsigKeyring([]), now: DIG.sha256.time }, want: 'NOTAUTH BADKEY' },
    { name: 'known name, other algorithm', given: { msg: s256, keys: wrongAlg, now: DIG.sha256.time }, want: 'NOTAUTH BADKEY' },
  ];
  for (const r of rows) assert.equal(verdict(r.given.msg, r.given.keys, r.given.now), r.want, r.name);
});

test('parseTsig: a compressed owner name is followed backwards only, within 255 octets; loops and forward pointers are malformed', () => {
  const good = Buffer.from(DIG.dnspython.hex, 'hex');
  const at = lastRecordStart(good);
  const ptrAt = at + 4; // \x03xfr then the pointer
  assert.equal(good.readUInt16BE(ptrAt), 0xc00c);
  assert.equal(parseTsig(good, at)!.keyName, 'xfr.example.test.');
  const withPtr = (to: number) => { const b = Buffer.from(good); b.writeUInt16BE(0xc000 | to, ptrAt); return b; };
  const rows: { name: string; given: Buffer; want: string | undefined }[] = [
    { name: 'to the question name', given: good, want: 'xfr.example.test.' },
    { name: 'to the TLD label of the question', given: withPtr(20), want: 'xfr.test.' },
    { name: 'to itself (a loop)', given: withPtr(ptrAt), want: undefined },
    { name: 'to its own first label (a loop)', given: withPtr(at), want: undefined },
    { name: 'forward, past the name', given: withPtr(ptrAt + 2), want: undefined },
    { name: 'past the end of the message', given: withPtr(0x3fff), want: undefined },
  ];
  for (const r of rows) assert.equal(parseTsig(r.given, at)?.keyName, r.want, r.name);
  // a chain of pointers, each to the one before it, that would spell a name over 255 octets
  const labels = Buffer.concat(Array.from({ length: 5 }, () => Buffer.concat([Buffer.from([63]), Buffer.alloc(63, 0x61)])));
  const long = Buffer.concat([Buffer.alloc(12), labels, Buffer.from([0xc0, 12])]);
  assert.equal(parseTsig(long, 12 + labels.length), undefined, 'a name longer than 255 octets');
});

/** A request signed here, with its MAC rewritten to `macLen` bytes (the rdlength adjusted). */
function withMacLength(key: TsigKey, macLen: number): Buffer {
  const base = dnsPacket.encode({ type: 'query', id: 7, questions: [{ name: 'example.test', type: 'AXFR' }] });
  const { msg } = signRequest(base, key, 1000);
  const at = lastRecordStart(msg);
  const t = parseTsig(msg, at)!;
  const mac = Buffer.alloc(macLen);
  t.mac.copy(mac, 0, 0, Math.min(macLen, t.mac.length));
  const macSizeAt = msg.length - 6 - t.mac.length - 2;
  const head = Buffer.from(msg.subarray(0, macSizeAt + 2));
  head.writeUInt16BE(macLen, macSizeAt);
  const out = Buffer.concat([head, mac, msg.subarray(msg.length - 6)]);
  const rdlenAt = at + 'xfr.example.test.'.length + 1 + 8;
  out.writeUInt16BE(out.readUInt16BE(rdlenAt) + macLen - t.mac.length, rdlenAt);
  return out;
}

test('verifyRequest: MAC lengths (RFC 8945 §5.2.2.1) and malformed records', () => {
  const key = KEYS.get('xfr.example.test.')!;
  const signed = signRequest(dnsPacket.encode({ type: 'query', id: 7, questions: [{ name: 'example.test', type: 'SOA' }] }), key, 1000).msg;
  const cut = Buffer.from(signed.subarray(0, signed.length - 1)); // rdata one byte short of its length
  const rows: { name: string; given: Buffer; want: string }[] = [
    { name: 'full length', given: withMacLength(key, 32), want: 'ok xfr.example.test.' },
    { name: 'truncated to 16 (allowed by the RFC, not by this server)', given: withMacLength(key, 16), want: 'NOTAUTH BADTRUNC (key known)' },
    { name: 'truncated below max(10, hash/2)', given: withMacLength(key, 8), want: 'NOTAUTH BADSIG' },
    { name: 'longer than the hash', given: withMacLength(key, 40), want: 'FORMERR' },
  ];
  for (const r of rows) assert.equal(verdict(r.given, KEYS, 1000), r.want, r.name);
  // a record whose length runs past the message is no TSIG the decoder accepts
  assert.equal(decodeQuery(cut, new ParsedQuery()), DecodeStatus.FormErr);
  // a TSIG that is not the last record: FORMERR (RFC 8945 §5.2)
  const notLast = Buffer.concat([signed, Buffer.from('00002900000000000000', 'hex')]);
  notLast.writeUInt16BE(notLast.readUInt16BE(10) + 1, 10);
  assert.equal(decodeQuery(notLast, new ParsedQuery()), DecodeStatus.FormErr);
});

test('signResponse and the stream signer: a client verifies every message, in order only', () => {
  const key = KEYS.get('xfr512.example.test.')!;
  const req = signRequest(dnsPacket.encode({ type: 'query', id: 99, questions: [{ name: 'example.test', type: 'AXFR' }] }), key, 5000);
  const v = verifyRequest(req.msg, tsigAt(req.msg), KEYS, 5000);
  assert.ok(v.ok);
  const reply = (n: number) => dnsPacket.encode({ type: 'response', id: 99, flags: dnsPacket.AUTHORITATIVE_ANSWER, answers: [{ name: `r${n}.example.test`, type: 'A', ttl: 60, data: `192.0.2.${n}` }] });
  const one = appendTsig(reply(1), signResponse(reply(1), v, 5001));
  assert.equal(verifyResponseStream([one], key, req.mac, 5001), undefined);
  const signer = new TsigStreamSigner(v);
  const msgs = [1, 2, 3].map((n) => { const m = reply(n); return appendTsig(m, signer.sign(m, 5001 + n)); });
  assert.equal(verifyResponseStream(msgs, key, req.mac, 5003), undefined, 'each message chained to the prior MAC');
  assert.deepEqual(msgs.map((m) => parseTsig(m, lastRecordStart(m))!.originalId), [99, 99, 99]);
  const rows: { name: string; given: Buffer[]; now: number; want: string | undefined }[] = [
    { name: 'messages swapped', given: [msgs[0]!, msgs[2]!, msgs[1]!], now: 5003, want: 'BADSIG' },
    { name: 'second message tampered with', given: [msgs[0]!, flip(msgs[1]!, 20), msgs[2]!], now: 5003, want: 'BADSIG' },
    { name: 'a message without its TSIG', given: [msgs[0]!, reply(2)], now: 5003, want: 'unsigned' },
    { name: 'verified against another request', given: msgs, now: 5003, want: 'BADSIG' },
    { name: 'clock far off', given: msgs, now: 9000, want: 'BADTIME' },
  ];
  for (const r of rows) {
    const mac = r.name === 'verified against another request' ? Buffer.alloc(64, 1) : req.mac;
    assert.equal(verifyResponseStream(r.given, key, mac, r.now), r.want, r.name);
  }
});

test('tsigErrorRecord: BADKEY and BADSIG unsigned, BADTIME signed with the server time in Other Data', () => {
  const key = KEYS.get('xfr.example.test.')!;
  const req = signRequest(dnsPacket.encode({ type: 'query', id: 5, questions: [{ name: 'example.test', type: 'SOA' }] }), key, 1000);
  const errorReply = dnsPacket.encode({ type: 'response', id: 5, flags: 9, questions: [{ name: 'example.test', type: 'SOA' }] });
  const cases: { name: string; keys: TsigKeyring; now: number; error: number; macLen: number }[] = [
    { name: 'BADKEY', keys: tsigKeyring([]), now: 1000, error: TSIG_ERROR.BADKEY, macLen: 0 },
    { name: 'BADSIG', keys: tsigKeyring([{ name: 'xfr.example.test', algorithm: 'hmac-sha256', secret: SECRET512 }]), now: 1000, error: TSIG_ERROR.BADSIG, macLen: 0 },
    { name: 'BADTIME', keys: KEYS, now: 2000, error: TSIG_ERROR.BADTIME, macLen: 32 },
  ];
  for (const c of cases) {
    const v = verifyRequest(req.msg, tsigAt(req.msg), c.keys, c.now);
    assert.ok(!v.ok && v.rcode === 9, c.name);
    const rr = tsigErrorRecord(errorReply, v, c.now);
    const msg = appendTsig(errorReply, rr);
    const t = parseTsig(msg, lastRecordStart(msg))!;
    assert.equal(t.error, c.error, c.name);
    assert.equal(t.mac.length, c.macLen, `${c.name}: MAC size`);
    assert.equal(t.keyName, 'xfr.example.test.');
    assert.equal(t.timeSigned, 1000, `${c.name}: the request's Time Signed`);
    if (c.name === 'BADTIME') {
      assert.equal(t.other.length, 6);
      assert.equal(t.other.readUInt16BE(0) * 2 ** 32 + t.other.readUInt32BE(2), 2000, 'server time in Other Data');
      assert.equal(verifyResponseStream([msg], key, req.mac, 1000), undefined, 'signed with the request key');
    }
  }
});

test('keys: names are case-insensitive and fully qualified; secrets are decoded once', () => {
  const k = tsigKeyring([{ name: 'Key.Example.', secret: SECRET256 }, { name: 'key.example', algorithm: 'hmac-sha1', secret: SECRET1 }]);
  assert.equal(k.size, 1, 'first key of a name wins');
  assert.equal(k.get('key.example.')!.algorithm, 'hmac-sha256', 'algorithm defaults to hmac-sha256');
  assert.deepEqual(k.get('key.example.')!.secret, Buffer.from(SECRET256, 'base64'));
});
