import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Ajv } from 'ajv';
import { addProjectFormats } from '../../../runtime/config/ajv.js';
import { FORMAT_HINTS, UNPRINTABLE_RANGES } from '../../../runtime/config/format-patterns.js';
import { isPrintableName } from '../../../runtime/config/text-rules.js';

const ajv = addProjectFormats(new Ajv({ strict: false }));
/** The format's own validator, as the server runs it. */
const formatOk = (format: string) => ajv.compile({ type: 'string', format });
/** The hint as a generic tool reads it: with the `u` flag (JSON Schema's dialect, ajv's default). */
const hintOk = (format: string) => {
  const h = FORMAT_HINTS[format]!;
  const re = new RegExp(h.pattern, 'u');
  return (s: string) => re.test(s) && [...s].length >= (h.minLength ?? 0);
};

const SEED = 20261128;
const RUNS = 3000;

/** Property: whatever the hint accepts, the format accepts (a request valid for a tool is valid for the server). */
function assertNoLooser(format: string, arb: fc.Arbitrary<string>): void {
  const server = formatOk(format);
  const hint = hintOk(format);
  fc.assert(fc.property(arb, (s) => !hint(s) || server(s)), { seed: SEED, numRuns: RUNS });
}

/** Values of the format that the hint must accept too (it is not stricter than it needs to be for ordinary input). */
function assertAccepts(format: string, values: string[]): void {
  const server = formatOk(format);
  const hint = hintOk(format);
  for (const v of values) {
    assert.ok(server(v), `${format}: the format accepts ${JSON.stringify(v)}`);
    assert.ok(hint(v), `${format}: the hint accepts ${JSON.stringify(v)}`);
  }
}

const text = (chars: string, maxLength = 40) => fc.string({ unit: fc.constantFrom(...chars), maxLength });

test('format hints: every pattern compiles with and without the u flag', () => {
  for (const [name, h] of Object.entries(FORMAT_HINTS)) {
    assert.doesNotThrow(() => new RegExp(h.pattern, 'u'), name);
    assert.doesNotThrow(() => new RegExp(h.pattern), name);
  }
});

test('format hints: UNPRINTABLE_RANGES are exactly the code points printable refuses (every code point scanned)', () => {
  const ranges: [number, number][] = [];
  for (let c = 0; c <= 0x10ffff; c++) {
    if (isPrintableName(String.fromCodePoint(c))) continue;
    const last = ranges.at(-1);
    if (last && last[1] === c - 1) last[1] = c;
    else ranges.push([c, c]);
  }
  assert.deepEqual(ranges, UNPRINTABLE_RANGES.map(([a, b]) => [a, b]));
});

test('format hints: printable agrees with the format on every BMP character, the refused astral ones, pairs and lone surrogates', () => {
  const u = new RegExp(FORMAT_HINTS.printable!.pattern, 'u');
  const plain = new RegExp(FORMAT_HINTS.printable!.pattern);
  for (let c = 0; c <= 0xffff; c++) {
    const s = `a${String.fromCharCode(c)}b`;
    assert.equal(u.test(s), isPrintableName(s), `U+${c.toString(16)}`);
    assert.equal(plain.test(s), isPrintableName(s), `U+${c.toString(16)} without u`);
  }
  for (const [a, b] of UNPRINTABLE_RANGES.filter(([x]) => x > 0xffff)) {
    for (let c = a; c <= b; c++) {
      assert.equal(u.test(String.fromCodePoint(c)), false, `U+${c.toString(16)}`);
      assert.equal(plain.test(String.fromCodePoint(c)), false, `U+${c.toString(16)} without u`);
    }
  }
  for (const ok of ['😀', 'café 東京', '𝄞 clef', '']) assert.ok(u.test(ok) && plain.test(ok), ok);
  for (const bad of ['\uD800', 'x\uDC00', '\uDBFF\uDBFF', 'a\u202Eb', 'zero\u200Bwidth']) assert.ok(!u.test(bad) && !plain.test(bad), JSON.stringify(bad));
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 20 }), (s) => u.test(s) === isPrintableName(s)), { seed: SEED, numRuns: RUNS });
});

test('format hints: ip and ipv4 accept what the formats accept, never more', () => {
  const ips = fc.oneof(fc.ipV4(), fc.ipV6(), fc.ipV4Extended(), text('0123456789abcdefABCDEF:.%'), text('0123456789.', 16));
  assertNoLooser('ip', ips);
  assertNoLooser('ipv4', ips);
  fc.assert(fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), (s) => hintOk('ip')(s) && formatOk('ip')(s)), { seed: SEED, numRuns: RUNS });
  fc.assert(fc.property(fc.ipV4(), (s) => hintOk('ipv4')(s)), { seed: SEED, numRuns: RUNS });
  assertAccepts('ip', ['192.0.2.1', '::', '::1', '2001:db8::1', '::ffff:192.0.2.1', '1:2:3:4:5:6:7:8']);
  assert.ok(!hintOk('ip')('fe80::1%eth0') && !hintOk('ip')('') && !hintOk('ip')('01.2.3.4'));
});

test('format hints: cidr accepts what the format accepts, never more', () => {
  const bits = fc.oneof(fc.nat(140).map(String), text('0123456789', 4));
  assertNoLooser('cidr', fc.oneof(
    fc.tuple(fc.oneof(fc.ipV4(), fc.ipV6()), bits).map(([a, b]) => `${a}/${b}`),
    text('0123456789abcdef:./%'),
  ));
  assertAccepts('cidr', ['10.0.0.0/8', '0.0.0.0/0', '192.0.2.1/32', '2001:db8::/32', '::/0', '::1/128', '10.0.0.0/008']);
  assert.ok(!hintOk('cidr')('10.0.0.0/33') && !hintOk('cidr')('::/129') && !hintOk('cidr')('10.0.0.0'));
});

test('format hints: fqdn, domain and redirect-host accept what the formats accept, never more', () => {
  const names = fc.oneof(
    fc.domain(),
    fc.domain().map((d) => `${d}.`),
    fc.domain().map((d) => `*.${d}`),
    text('ab0-_.*', 30),
    fc.array(fc.string({ unit: fc.constantFrom('a', '1', '-', '_'), minLength: 0, maxLength: 70 }), { maxLength: 6 }).map((l) => l.join('.')),
    fc.constantFrom('a'.repeat(63), 'a'.repeat(64), `${'a.'.repeat(126)}a`, `${'a.'.repeat(127)}`, `${'a.'.repeat(127)}a`),
  );
  for (const f of ['fqdn', 'domain', 'redirect-host']) assertNoLooser(f, names);
  assertAccepts('fqdn', ['app.example.com.', 'a.', '_dmarc.example.com.', '*.example.com.']);
  assertAccepts('domain', ['app.example.com', 'app.example.com.', 'localhost', `${'a.'.repeat(126)}a`]);
  assertAccepts('redirect-host', ['www.example.com', '*.example.com', 'example.com.', 'xn--bcher-kva.example']);
});

test('format hints: http-url accepts only what the format accepts', () => {
  const urls = fc.oneof(
    fc.webUrl({ withQueryParameters: true, withFragments: true }),
    fc.webUrl({ authoritySettings: { withIPv4: true, withIPv6: true, withPort: true } }),
    fc.tuple(fc.constantFrom('http://', 'https://', 'HTTP://', 'ftp://'), text('ab0-.:[]/?#% \t', 30)).map(([a, b]) => a + b),
    fc.tuple(fc.domain(), fc.nat(70000)).map(([h, p]) => `http://${h}:${p}/`),
  );
  assertNoLooser('http-url', urls);
  assertAccepts('http-url', ['http://example.com', 'https://example.com:8443/hook?x=1#y', 'http://192.0.2.1:8080/', 'http://[::1]:9/', 'https://a.b.example./p']);
  for (const bad of ['http://example.com:0/', 'http://example.com:65536', 'http://exa mple.com', 'ftp://example.com', 'http://1.2.3.999/', 'http://xn--a.com/']) {
    assert.ok(!hintOk('http-url')(bad), bad);
  }
});
