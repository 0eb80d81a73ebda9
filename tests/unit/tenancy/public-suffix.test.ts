import { test } from 'node:test';
import assert from 'node:assert/strict';
import { publicSuffixRefusal } from '../../../runtime/tenancy/public-suffix.js';

// runtime/tenancy/public-suffix.ts: the Public Suffix List (ICANN and private sections) through tldts;
// a top-level domain the list does not know is a suffix of one label.

test('public suffixes and wildcards at or above one are refused, naming the suffix (table)', () => {
  const rows: { name: string; want: string | undefined }[] = [
    { name: 'com', want: 'com' },
    { name: 'org.', want: 'org' },
    { name: 'CO.UK.', want: 'co.uk' },
    { name: 'github.io', want: 'github.io' },
    { name: 'test.', want: 'test' },
    { name: 'internal', want: 'internal' },
    { name: '*.com', want: 'com' },
    { name: '*.co.uk.', want: 'co.uk' },
    { name: '*.test', want: 'test' },
    { name: '*.ck', want: 'ck' },
    { name: '*.foo.ck', want: 'foo.ck' },
    { name: '*.', want: '.' },
    { name: '*', want: '.' },
    { name: 'www.bshop.com', want: undefined },
    { name: 'bshop.com.', want: undefined },
    { name: '*.bshop.com', want: undefined },
    { name: 'example.test', want: undefined },
    { name: 'www.example.test.', want: undefined },
    { name: '*.example.test', want: undefined },
    { name: 'shop.co.uk', want: undefined },
    { name: 'me.github.io', want: undefined },
    { name: '_acme-challenge.example.test.', want: undefined },
    { name: 'www.ck', want: undefined },
  ];
  for (const r of rows) assert.equal(publicSuffixRefusal(r.name)?.suffix, r.want, r.name);
  assert.equal(publicSuffixRefusal('co.uk.')?.message, 'co.uk. is a public suffix (co.uk); use a name under it');
  assert.equal(publicSuffixRefusal('*.co.uk')?.message, '*.co.uk covers every name under the public suffix co.uk');
});
