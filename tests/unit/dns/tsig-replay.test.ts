import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from '../../../runtime/store/db.js';
import { ReplayGuard } from '../../../runtime/dns/tsig-replay.js';
import { SqliteReplayStore } from '../../../runtime/dns/tsig-replay-store.js';

const mac = (s: string) => Buffer.from(s);

test('SqliteReplayStore: a MAC is claimed once per key until its expiry, then forgotten', async () => {
  const db = openDatabase(':memory:');
  const s = new SqliteReplayStore(db);
  const rows: { name: string; given: [string, string, number, number]; want: boolean }[] = [
    { name: 'new', given: ['k1.', 'm1', 1300, 1000], want: true },
    { name: 'the same again', given: ['k1.', 'm1', 1300, 1001], want: false },
    { name: 'the same MAC of another key', given: ['k2.', 'm1', 1300, 1001], want: true },
    { name: 'another MAC', given: ['k1.', 'm2', 1300, 1002], want: true },
    { name: 'at its expiry it still counts', given: ['k1.', 'm1', 1600, 1300], want: false },
    { name: 'past its expiry it is gone', given: ['k1.', 'm1', 1600, 1301], want: true },
  ];
  for (const r of rows) assert.equal(await s.claim(r.given[0], mac(r.given[1]), r.given[2], r.given[3]), r.want, r.name);
  assert.equal((db.prepare('SELECT COUNT(*) AS n FROM dns_tsig_replay').get() as { n: number }).n, 1, 'expired rows are swept (only the renewed one is left)');
  db.close();
});

test('ReplayGuard: fresh until accepted; an older Time Signed than the newest accepted is not fresh', () => {
  const g = new ReplayGuard(600);
  assert.equal(g.fresh('k.', 100, mac('a'), 100), true);
  assert.equal(g.fresh('k.', 100, mac('a'), 100), true, 'asking records nothing');
  g.accepted('k.', 100, mac('a'));
  assert.equal(g.fresh('k.', 100, mac('a'), 101), false, 'the same MAC');
  assert.equal(g.fresh('k.', 99, mac('b'), 101), false, 'older than the newest');
  assert.equal(g.fresh('k.', 100, mac('b'), 101), true, 'as new as the newest, another MAC');
  assert.equal(g.fresh('other.', 1, mac('a'), 101), true, 'per key');
});
