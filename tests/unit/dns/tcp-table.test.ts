import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TcpConnectionTable, sourceKey, type TcpActivity, type TcpLimits } from '../../../runtime/dns/tcp-table.js';
import { tcpLimitsFromConfig } from '../../../runtime/dns/tcp-transport.js';

const limits: TcpLimits = { idleMs: 1000, messageMs: 300, maxConnections: 3, maxPerSource: 2 };
const IDLE: TcpActivity = { partial: false, answering: false, unsent: false };

/** A table on a clock the test moves by hand. */
function table(l: TcpLimits = limits) {
  const clock = { t: 0 };
  return { clock, t: new TcpConnectionTable<string>(l, () => clock.t) };
}

test('admission: per-source cap refuses, global cap evicts the least recently active idle connection, else refuses', () => {
  // `wait`: ms between the last activity and the new connection (200 unless given; the grace is 100)
  const rows: { name: string; given: { src: string; busy?: boolean }[]; activity?: number[]; wait?: number; src: string; want: string }[] = [
    { name: 'room left', given: [{ src: 'a' }], src: 'b', want: 'accept' },
    { name: 'source at its cap', given: [{ src: 'a' }, { src: 'a' }], src: 'a', want: 'refuse per_source' },
    { name: 'source cap wins over a full table', given: [{ src: 'a' }, { src: 'a' }, { src: 'b' }], src: 'a', want: 'refuse per_source' },
    { name: 'full, all idle: oldest goes', given: [{ src: 'a' }, { src: 'b' }, { src: 'c' }], src: 'd', want: 'evict a' },
    { name: 'full, oldest busy: oldest idle goes', given: [{ src: 'a', busy: true }, { src: 'b' }, { src: 'c' }], src: 'd', want: 'evict b' },
    // b was added before c, but c has been quiet longer once b reported activity
    { name: 'activity moves a connection to the back', given: [{ src: 'a', busy: true }, { src: 'b' }, { src: 'c' }], activity: [1], src: 'd', want: 'evict c' },
    { name: 'full, none idle', given: [{ src: 'a', busy: true }, { src: 'b', busy: true }, { src: 'c', busy: true }], src: 'd', want: 'refuse global_full' },
    // a is idle 20 ms longer than c: 90 ms is still within its grace, and the younger ones' too
    { name: 'full, idle ones all within the grace', given: [{ src: 'a' }, { src: 'b' }, { src: 'c' }], wait: 70, src: 'd', want: 'refuse global_full' },
    { name: 'full, oldest idle at the end of the grace', given: [{ src: 'a' }, { src: 'b' }, { src: 'c' }], wait: 80, src: 'd', want: 'evict a' },
  ];
  for (const r of rows) {
    const { clock, t } = table();
    const entries = r.given.map((g) => {
      clock.t += 10;
      const e = t.add(g.src, g.src);
      if (g.busy) t.report(e, { ...IDLE, partial: true });
      return e;
    });
    for (const i of r.activity ?? []) { clock.t += 10; t.report(entries[i]!, IDLE); }
    clock.t += r.wait ?? 200;
    const v = t.admit(r.src);
    const got = v.kind === 'accept' ? 'accept' : v.kind === 'evict' ? `evict ${v.victim.value}` : `refuse ${v.reason}`;
    assert.equal(got, r.want, r.name);
  }
});

test('counts: per source and in total, idle list kept across reports and removals', () => {
  const { t } = table({ ...limits, maxConnections: 10 });
  const a1 = t.add('a', 'a1');
  const a2 = t.add('a', 'a2');
  const b1 = t.add('b', 'b1');
  assert.deepEqual([t.size, t.idle, t.sourceCount('a'), t.sourceCount('b')], [3, 3, 2, 1]);
  t.report(a1, { ...IDLE, answering: true });
  assert.equal(t.idle, 2);
  assert.equal(t.oldestIdle()?.value, 'a2');
  t.remove(a2);
  t.remove(a2);
  assert.deepEqual([t.size, t.idle, t.sourceCount('a')], [2, 1, 1], 'a second remove is a no-op');
  assert.equal(t.admit('a').kind, 'accept', 'a slot of the source is free again');
  t.remove(a1);
  t.remove(b1);
  assert.deepEqual([t.size, t.idle, t.sourceCount('a'), t.oldestIdle()], [0, 0, 0, undefined]);
  t.report(b1, IDLE);
  assert.equal(t.idle, 0, 'a removed entry does not come back');
});

test('deadlines: idle clock, message deadline not moved by more bytes, write deadline, none while answering', () => {
  const rows: { name: string; steps: [number, TcpActivity][]; want: [number, string | undefined] }[] = [
    { name: 'new connection', steps: [], want: [1000, 'idle'] },
    { name: 'activity restarts the idle clock', steps: [[400, IDLE]], want: [1400, 'idle'] },
    { name: 'first byte starts the message deadline', steps: [[100, { ...IDLE, partial: true }]], want: [400, 'message'] },
    { name: 'more bytes of the same message do not extend it', steps: [[100, { ...IDLE, partial: true }], [250, { ...IDLE, partial: true }]], want: [400, 'message'] },
    { name: 'message complete: idle again', steps: [[100, { ...IDLE, partial: true }], [250, IDLE]], want: [1250, 'idle'] },
    { name: 'next message gets its own deadline', steps: [[100, { ...IDLE, partial: true }], [250, IDLE], [260, { ...IDLE, partial: true }]], want: [560, 'message'] },
    { name: 'answer being computed: no deadline', steps: [[100, { ...IDLE, answering: true }]], want: [Infinity, undefined] },
    { name: 'answer not read by the client', steps: [[100, { ...IDLE, unsent: true }], [200, { ...IDLE, unsent: true }]], want: [400, 'write'] },
    { name: 'earlier of message and write deadline', steps: [[100, { ...IDLE, unsent: true }], [200, { ...IDLE, unsent: true, partial: true }]], want: [400, 'write'] },
  ];
  for (const r of rows) {
    const { clock, t } = table();
    const e = t.add('a', 'x');
    for (const [at, a] of r.steps) { clock.t = at; t.report(e, a); }
    assert.deepEqual([e.deadline, e.deadlineKind], r.want, r.name);
    assert.equal(e.idle, r.want[1] === 'idle', `${r.name}: evictable only when idle`);
  }
});

test('sourceKey: IPv4 address, IPv4-mapped as IPv4, IPv6 by /64', () => {
  const rows = [
    { given: '127.0.0.2', want: '127.0.0.2' },
    { given: '::ffff:192.0.2.7', want: '192.0.2.7' },
    { given: '::1', want: '0:0:0:0::/64' },
    { given: '2001:db8:1:2:aaaa::1', want: '2001:db8:1:2::/64' },
    { given: '2001:DB8:1:2:bbbb:cccc:dddd:eeee', want: '2001:db8:1:2::/64' },
    { given: '2001:db8::5', want: '2001:db8:0:0::/64' },
    { given: '2001:0db8:0001::', want: '2001:db8:1:0::/64' },
    { given: '1::2:3:4:5:192.0.2.1', want: '1:0:2:3::/64' },
    { given: '', want: '' },
  ];
  for (const r of rows) assert.equal(sourceKey(r.given), r.want, r.given);
});

test('limits from dns.tcp: durations parsed, 0 or absent means the default', () => {
  const rows = [
    { given: undefined, want: { idleMs: 10_000, messageMs: 2_000, maxConnections: 1024, maxPerSource: 32 } },
    { given: { idleTimeout: '1m', messageTimeout: '300ms', maxConnections: 5, maxConnectionsPerSource: 2 }, want: { idleMs: 60_000, messageMs: 300, maxConnections: 5, maxPerSource: 2 } },
    { given: { idleTimeout: '0', messageTimeout: '0', maxConnections: 1024, maxConnectionsPerSource: 32 }, want: { idleMs: 10_000, messageMs: 2_000, maxConnections: 1024, maxPerSource: 32 } },
  ];
  for (const r of rows) assert.deepEqual(tcpLimitsFromConfig(r.given), r.want, JSON.stringify(r.given));
});
