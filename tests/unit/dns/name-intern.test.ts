import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NAME_TEXT_MAX, NameTable, hashName } from '../../../runtime/dns/name-intern.js';
import { DecodeStatus, ParsedQuery, decodeQuery, queryNames } from '../../../runtime/dns/wire-query.js';

const bytes = (s: string) => Buffer.from(s, 'latin1');
const intern = (t: NameTable, s: string, hash = hashName(bytes(s), s.length)) => t.intern(bytes(s), s.length, hash);

/** A query packet for `labels` (raw label bytes, so a label may hold a dot), type A, class IN. */
function packet(labels: string[]): Buffer {
  const parts = [Buffer.from([0, 7, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0])];
  for (const l of labels) parts.push(Buffer.from([l.length]), bytes(l));
  parts.push(Buffer.from([0, 0, 1, 0, 1]));
  return Buffer.concat(parts);
}

test('intern: a name seen before builds no string; another name does', () => {
  const t = new NameTable(8);
  const rows: { name: string; given: string; want: string; misses: number }[] = [
    { name: 'first sight', given: 'www.example.test.', want: 'www.example.test.', misses: 1 },
    { name: 'again', given: 'www.example.test.', want: 'www.example.test.', misses: 1 },
    { name: 'another name', given: 'api.example.test.', want: 'api.example.test.', misses: 2 },
    { name: 'a prefix of a known name', given: 'www.example.', want: 'www.example.', misses: 3 },
    { name: 'the first again', given: 'www.example.test.', want: 'www.example.test.', misses: 3 },
  ];
  for (const r of rows) {
    assert.equal(intern(t, r.given), r.want, r.name);
    assert.equal(t.misses, r.misses, r.name);
  }
});

test('intern: colliding hashes never return another name, and the least recently used way is replaced', () => {
  // One set of two ways, and every name given the same hash: all of them collide.
  const t = new NameTable(2);
  const h = 12345;
  assert.equal(intern(t, 'a.test.', h), 'a.test.');
  assert.equal(intern(t, 'b.test.', h), 'b.test.');
  assert.equal(intern(t, 'a.test.', h), 'a.test.', 'same hash, same set: found by its bytes');
  assert.equal(t.misses, 2);
  // c evicts b (a was used last), so a is still there and b is built again.
  assert.equal(intern(t, 'c.test.', h), 'c.test.');
  assert.equal(intern(t, 'a.test.', h), 'a.test.');
  assert.equal(t.misses, 3, 'a survived the eviction');
  assert.equal(intern(t, 'b.test.', h), 'b.test.');
  assert.equal(t.misses, 4, 'b was evicted');
  // Same length and hash, bytes differ only in the last position.
  assert.equal(intern(t, 'b.tesu.', h), 'b.tesu.');
  assert.equal(intern(t, 'b.test.', h), 'b.test.');
});

test('intern: eviction under many names keeps every answer right', () => {
  const t = new NameTable(16);
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 200; i++) assert.equal(intern(t, `n${i}.example.test.`), `n${i}.example.test.`);
  }
  assert.ok(t.misses > 200, 'more names than slots: some are built again');
  assert.ok(t.misses <= 600);
});

test('intern: names up to the length limit are kept; a longer one is returned but not kept', () => {
  const t = new NameTable(4);
  const longest = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}.`;
  assert.equal(longest.length, NAME_TEXT_MAX);
  assert.equal(intern(t, longest), longest);
  assert.equal(intern(t, longest), longest);
  assert.equal(t.misses, 1);
  const over = `${longest}x`;
  assert.equal(intern(t, over), over);
  assert.equal(intern(t, over), over);
  assert.equal(t.misses, 3, 'not kept');
});

test('decoder: case folding reuses the name; a dot inside a label is another name', () => {
  const q = new ParsedQuery();
  assert.equal(decodeQuery(packet(['Intern-Case', 'Example', 'TEST']), q), DecodeStatus.Ok);
  assert.equal(q.name, 'intern-case.example.test.');
  const misses = queryNames.misses;
  for (const labels of [['intern-case', 'example', 'test'], ['INTERN-CASE', 'EXAMPLE', 'test'], ['iNtErN-cAsE', 'eXaMpLe', 'TeSt']]) {
    assert.equal(decodeQuery(packet(labels), q), DecodeStatus.Ok);
    assert.equal(q.name, 'intern-case.example.test.');
    assert.equal(q.labels, 3);
  }
  assert.equal(queryNames.misses, misses, 'every spelling found the interned name');
  // "a.b" as one label is not the two labels "a" and "b": the dot becomes 0x7f in the text form.
  assert.equal(decodeQuery(packet(['a.b', 'intern-dot', 'test']), q), DecodeStatus.Ok);
  assert.equal(q.name, 'a\x7fb.intern-dot.test.');
  assert.equal(q.labels, 3);
  assert.equal(decodeQuery(packet(['a', 'b', 'intern-dot', 'test']), q), DecodeStatus.Ok);
  assert.equal(q.name, 'a.b.intern-dot.test.');
  assert.equal(q.labels, 4);
  assert.equal(decodeQuery(packet(['a.b', 'intern-dot', 'test']), q), DecodeStatus.Ok);
  assert.equal(q.name, 'a\x7fb.intern-dot.test.');
});

test('decoder: a name of 255 octets on the wire is read, 256 octets is FORMERR (RFC 1035 §2.3.4)', () => {
  const q = new ParsedQuery();
  const max = ['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63), 'd'.repeat(61)]; // 4 + 250 + 1 = 255 octets
  assert.equal(decodeQuery(packet(max), q), DecodeStatus.Ok);
  assert.equal(q.name, `${max.join('.')}.`);
  assert.equal(decodeQuery(packet(max), q), DecodeStatus.Ok, 'again, from the table');
  assert.equal(q.name, `${max.join('.')}.`);
  const over = ['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63), 'd'.repeat(62)]; // 256 octets
  assert.equal(decodeQuery(packet(over), q), DecodeStatus.FormErr);
});
