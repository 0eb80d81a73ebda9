import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  carriedByRef, checkObjectSize, checkPlanBytes, inlineLimit, isRefShaped, MAX_PLAN_OBJECT_BYTES, messageBytes, parseRefMsg, planObjectName, sha256Hex,
} from '../../../runtime/cluster/plan-ref.js';

test('inline or by reference: the limit is max_payload less 4 KiB of headers; larger bodies go by reference', () => {
  const rows: { name: string; maxPayload: number | undefined; bytes: number; want: boolean }[] = [
    { name: 'default server, small plan', maxPayload: 1_048_576, bytes: 10_000, want: false },
    { name: 'default server, exactly the limit', maxPayload: 1_048_576, bytes: 1_048_576 - 4096, want: false },
    { name: 'default server, one byte over', maxPayload: 1_048_576, bytes: 1_048_576 - 4095, want: true },
    { name: 'default server, 1 MiB plan (headers would not fit)', maxPayload: 1_048_576, bytes: 1_048_576, want: true },
    { name: '64 KiB server, 70 KB plan', maxPayload: 65_536, bytes: 70_000, want: true },
    { name: '64 KiB server, 60 KB plan', maxPayload: 65_536, bytes: 60_000, want: false },
    { name: 'unknown max_payload: 1 MiB assumed', maxPayload: undefined, bytes: 1_000_000, want: false },
    { name: 'unknown max_payload: 1 MiB assumed, 2 MB plan', maxPayload: undefined, bytes: 2_000_000, want: true },
    { name: 'zero max_payload: 1 MiB assumed', maxPayload: 0, bytes: 500_000, want: false },
    { name: 'tiny max_payload: at least 1 KiB inline', maxPayload: 2_000, bytes: 1_024, want: false },
  ];
  for (const r of rows) assert.equal(carriedByRef(r.bytes, inlineLimit(r.maxPayload)), r.want, r.name);
  assert.equal(inlineLimit(65_536), 61_440);
  assert.equal(inlineLimit(undefined), 1_044_480);
});

test('object names: cluster, escaped revision and digest', () => {
  const sha = sha256Hex(new TextEncoder().encode('x'));
  assert.equal(sha, '2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881');
  assert.equal(planObjectName('c1', 'api:1f2e', sha), `c1.api=3a1f2e.${sha}`);
  assert.equal(planObjectName('c1', '0123abc', sha), `c1.0123abc.${sha}`);
});

test('reference messages: a well-formed one parses; a malformed one is no reference (skipped like any non-plan)', () => {
  const sha = 'a'.repeat(64);
  const good = { ref: { bucket: 'SVC_CFG_PLANS', name: `c.r1.${sha}`, size: 70_000, sha256: sha }, node: 'a', at: 1, revision: 'r1' };
  assert.deepEqual(parseRefMsg(good), good);
  assert.deepEqual(parseRefMsg({ ...good, extra: 1 }), good, 'unknown fields are dropped');
  const rows: { name: string; body: unknown }[] = [
    { name: 'no ref', body: { plan: {}, node: 'a', at: 1 } },
    { name: 'ref null', body: { ...good, ref: null } },
    { name: 'ref a string', body: { ...good, ref: 'x' } },
    { name: 'bucket with a dot', body: { ...good, ref: { ...good.ref, bucket: 'SVC.PLANS' } } },
    { name: 'empty bucket', body: { ...good, ref: { ...good.ref, bucket: '' } } },
    { name: 'empty name', body: { ...good, ref: { ...good.ref, name: '' } } },
    { name: 'size zero', body: { ...good, ref: { ...good.ref, size: 0 } } },
    { name: 'size fractional', body: { ...good, ref: { ...good.ref, size: 1.5 } } },
    { name: 'size a string', body: { ...good, ref: { ...good.ref, size: '70000' } } },
    { name: 'digest too short', body: { ...good, ref: { ...good.ref, sha256: 'abc' } } },
    { name: 'digest upper case', body: { ...good, ref: { ...good.ref, sha256: 'A'.repeat(64) } } },
    { name: 'no revision', body: { ...good, revision: '' } },
    { name: 'no node', body: { ref: good.ref, at: 1, revision: 'r1' } },
    { name: 'time not a number', body: { ...good, at: 'now' } },
    { name: 'an array', body: [good] },
    { name: 'null', body: null },
  ];
  for (const r of rows) assert.equal(parseRefMsg(r.body), undefined, r.name);
  assert.equal(isRefShaped(good), true);
  assert.equal(isRefShaped({ ...good, ref: null }), true, 'shaped like a reference, malformed');
  assert.equal(isRefShaped({ plan: {} }), false);
  assert.equal(isRefShaped([good]), false);
});

test('fetched bytes: the size and the digest must be those of the reference; an oversized object is refused before reading', () => {
  const data = new TextEncoder().encode('{"plan":{}}');
  const ref = { bucket: 'B', name: 'n', size: data.byteLength, sha256: sha256Hex(data) };
  assert.equal(checkPlanBytes(ref, data), undefined);
  assert.match(checkPlanBytes(ref, data.subarray(1)) ?? '', /is 10 bytes, the reference says 11/);
  const flipped = Uint8Array.from(data);
  flipped[2] = 0x51;
  assert.match(checkPlanBytes(ref, flipped) ?? '', /has SHA-256 [0-9a-f]{64}, the reference says/);
  assert.equal(checkObjectSize(ref, data.byteLength), undefined);
  assert.match(checkObjectSize({ ...ref, size: MAX_PLAN_OBJECT_BYTES + 1 }, MAX_PLAN_OBJECT_BYTES + 1) ?? '', /more than the 268435456 allowed/);
  assert.match(checkObjectSize(ref, 12) ?? '', /is 12 bytes, the reference says 11/);
});

test('messageBytes: the bytes and SHA-256 of the joined texts, a text per turn', async () => {
  const texts = ['{"a":"é', '€ 😀', '', '"}'];
  let pauses = 0;
  const r = await messageBytes(texts, async () => { pauses++; });
  const whole = new TextEncoder().encode(texts.join(''));
  assert.deepEqual(Buffer.from(r.bytes), Buffer.from(whole));
  assert.equal(r.sha256, sha256Hex(whole));
  assert.equal(pauses, texts.length - 1);
  const one = await messageBytes(['{}']);
  assert.deepEqual([Buffer.from(one.bytes).toString(), one.sha256], ['{}', sha256Hex(new TextEncoder().encode('{}'))]);
});
