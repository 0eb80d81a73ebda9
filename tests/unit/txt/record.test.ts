import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GslbError } from '../../../runtime/errors.js';
import { txtFields, txtRdata, txtValueOf } from '../../../runtime/txt/record.js';

test('txtFields: the name lower-cased with one trailing dot, ttl defaulted, values kept in order', () => {
  assert.deepEqual(txtFields({ name: '_ACME-Challenge.WWW.Example.test', values: ['b', 'a'] }), { name: '_acme-challenge.www.example.test.', values: ['b', 'a'], ttl: 300 });
  assert.deepEqual(txtFields({ name: 'x.example.test.', values: [''], ttl: 0 }).ttl, 300);
  assert.deepEqual(txtFields({ name: 'x.example.test.', values: [''], ttl: 60 }).ttl, 60);
});

test('txtFields: every broken rule is a 400 naming the field', () => {
  const rows: { name: string; given: { name: string; values: string[] }; want: RegExp }[] = [
    { name: 'bad name', given: { name: 'a..b', values: ['x'] }, want: /^name: must be a valid DNS name/ },
    { name: 'wildcard', given: { name: '*.example.test', values: ['x'] }, want: /^name: wildcard names are not supported/ },
    { name: 'no values', given: { name: 'a.example.test', values: [] }, want: /^values: must hold 1 to 50 values/ },
    { name: 'too many values', given: { name: 'a.example.test', values: Array.from({ length: 51 }, (_, i) => `v${i}`) }, want: /^values: must hold 1 to 50/ },
    { name: 'a value too long', given: { name: 'a.example.test', values: ['x', 'é'.repeat(2041)] }, want: /^values\[1\]: at most 4080 bytes \(UTF-8\), got 4082/ },
    { name: 'duplicate value', given: { name: 'a.example.test', values: ['x', 'y', 'x'] }, want: /^values\[2\]: the same value twice/ },
    { name: 'whole set too large', given: { name: 'a.example.test', values: Array.from({ length: 5 }, (_, i) => `${i}`.repeat(4000)) }, want: /^values: at most 16000 bytes in all, got 20000/ },
  ];
  for (const r of rows) {
    assert.throws(() => txtFields(r.given), (e: unknown) => e instanceof GslbError && e.code === 'API_BAD_REQUEST' && r.want.test(e.message), r.name);
  }
});

test('txtRdata: 255-byte character-strings (RFC 1035 §3.3.14); the empty value is one empty string; txtValueOf inverts it', () => {
  const rows: { value: string; lengths: number[] }[] = [
    { value: '', lengths: [0] },
    { value: 'v=spf1 -all', lengths: [11] },
    { value: 'a'.repeat(255), lengths: [255] },
    { value: 'a'.repeat(256), lengths: [255, 1] },
    { value: 'b'.repeat(600), lengths: [255, 255, 90] },
  ];
  for (const r of rows) {
    const rd = txtRdata(r.value);
    const lengths: number[] = [];
    for (let at = 0; at < rd.length; at += rd[at]! + 1) lengths.push(rd[at]!);
    assert.deepEqual(lengths, r.lengths, `${r.value.length} bytes`);
    assert.equal(rd.length, Buffer.byteLength(r.value) + r.lengths.length);
    assert.deepEqual(txtValueOf(rd), { value: r.value });
  }
  // what an RFC 2136 client may send that is not a stored value: refused, never turned into U+FFFD
  const bad: { name: string; given: number[]; want: unknown }[] = [
    { name: 'not UTF-8', given: [2, 0xff, 0xfe], want: { problem: 'not-utf8' } },
    { name: 'a UTF-8 sequence cut between two strings is still UTF-8', given: [1, 0xc3, 1, 0xa9], want: { value: 'é' } },
    { name: 'a lone continuation byte', given: [3, 0x61, 0x80, 0x62], want: { problem: 'not-utf8' } },
    { name: 'a string longer than the data', given: [5, 0x61], want: { problem: 'malformed' } },
  ];
  for (const r of bad) assert.deepEqual(txtValueOf(Buffer.from(r.given)), r.want, r.name);
});
