import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeTimers } from '../health/fake-timers.js';
import { decodeNotification, encodeKeepalive, FrameReader, MsgType, type RawMessage } from '../../../runtime/bgp/header.js';
import { encodeOpen } from '../../../runtime/bgp/open.js';
import { negotiateTimers, Session, type SessionEnd, type SessionConfig } from '../../../runtime/bgp/session.js';
import { backoffDelay } from '../../../runtime/bgp/backoff.js';

const CFG: SessionConfig = { localAsn: 65010, routerId: '192.0.2.1', remoteAsn: 65020, holdTime: 9, keepAliveTime: 3 };

/** A session over a recording transport, driven by a fake clock. */
function harness(cfg: SessionConfig = CFG) {
  const timers = new FakeTimers();
  const reader = new FrameReader();
  const sent: RawMessage[] = [];
  const ends: SessionEnd[] = [];
  let closed = 0;
  let established = 0;
  const s = new Session(cfg, { write: (b) => sent.push(...reader.push(b)), end: () => { closed++; } }, timers, {
    onEstablished: () => { established++; },
    onEnd: (e) => ends.push(e),
  });
  const types = () => sent.map((m) => m.type);
  const lastNotification = () => { const m = sent.filter((x) => x.type === MsgType.Notification).at(-1); return m && decodeNotification(m.body); };
  return { s, timers, sent, ends, types, lastNotification, closed: () => closed, established: () => established };
}
const peerOpen = (o: Partial<{ asn: number; holdTime: number; routerId: string }> = {}) => encodeOpen({ asn: 65020, holdTime: 90, routerId: '10.0.0.9', ...o });

test('timers: hold is the smaller proposal, keepalive at most a third of it, 0 turns both off', () => {
  const rows: { given: [number, number, number]; want: { hold: number; keepAlive: number } }[] = [
    { given: [90, 90, 30], want: { hold: 90, keepAlive: 30 } },
    { given: [90, 9, 30], want: { hold: 9, keepAlive: 3 } },
    { given: [9, 90, 3], want: { hold: 9, keepAlive: 3 } },
    { given: [90, 3, 30], want: { hold: 3, keepAlive: 1 } },
    { given: [90, 240, 10], want: { hold: 90, keepAlive: 10 } },
    { given: [0, 90, 30], want: { hold: 0, keepAlive: 0 } },
    { given: [90, 0, 30], want: { hold: 0, keepAlive: 0 } },
  ];
  for (const r of rows) assert.deepEqual(negotiateTimers(...r.given), r.want, JSON.stringify(r.given));
});

test('OpenSent → OpenConfirm → Established; keepalives every negotiated interval; UPDATEs checked and dropped', async () => {
  const h = harness();
  h.s.start();
  assert.deepEqual([h.s.state, h.types()], ['OpenSent', [MsgType.Open]]);
  h.s.receive(peerOpen({ holdTime: 6 }));
  assert.deepEqual([h.s.state, h.s.hold, h.s.keepAlive, h.types()], ['OpenConfirm', 6, 2, [MsgType.Open, MsgType.Keepalive]]);
  h.s.receive(encodeKeepalive());
  assert.deepEqual([h.s.state, h.established(), h.s.establishedAt], ['Established', 1, 0]);
  await h.timers.advance(5000);
  assert.equal(h.types().filter((t) => t === MsgType.Keepalive).length, 1 + 2, 'keepalives at 2 s and 4 s');
  // any message from the peer resets the hold timer
  for (let i = 0; i < 4; i++) { h.s.receive(encodeKeepalive()); await h.timers.advance(5000); }
  assert.equal(h.s.state, 'Established');
  // a well-formed UPDATE is ignored, the session stays up
  h.s.receive(Buffer.from([...Buffer.alloc(16, 0xff), 0, 23, 2, 0, 0, 0, 0]));
  assert.equal(h.s.state, 'Established');
});

test('hold timer expiry sends NOTIFICATION 4/0 and closes', async () => {
  const h = harness();
  h.s.start();
  h.s.receive(peerOpen({ holdTime: 6 }));
  h.s.receive(encodeKeepalive());
  await h.timers.advance(5999);
  assert.equal(h.s.state, 'Established');
  await h.timers.advance(1);
  assert.deepEqual([h.s.state, h.closed(), h.lastNotification()?.code, h.lastNotification()?.subcode], ['Idle', 1, 4, 0]);
  assert.match(h.ends[0]!.reason, /Hold Timer Expired/);
});

test('waiting for OPEN times out after the large initial hold time (240 s)', async () => {
  const h = harness();
  h.s.start();
  await h.timers.advance(239_999);
  assert.equal(h.s.state, 'OpenSent');
  await h.timers.advance(1);
  assert.deepEqual([h.s.state, h.lastNotification()?.code], ['Idle', 4]);
});

test('hold time 0 on either side: no keepalives, no hold timer', async () => {
  const h = harness();
  h.s.start();
  h.s.receive(peerOpen({ holdTime: 0 }));
  h.s.receive(encodeKeepalive());
  await h.timers.advance(3_600_000);
  assert.deepEqual([h.s.state, h.types().filter((t) => t === MsgType.Keepalive).length], ['Established', 1]);
});

test('OPEN refusals and unexpected messages: the NOTIFICATION of RFC 4271 §6 and RFC 6608', () => {
  const rows: { name: string; given: (h: ReturnType<typeof harness>) => void; want: [number, number] }[] = [
    { name: 'hold time 1', given: (h) => h.s.receive(peerOpen({ holdTime: 1 })), want: [2, 6] },
    { name: 'hold time 2', given: (h) => h.s.receive(peerOpen({ holdTime: 2 })), want: [2, 6] },
    { name: 'wrong AS', given: (h) => h.s.receive(peerOpen({ asn: 65021 })), want: [2, 2] },
    { name: 'KEEPALIVE in OpenSent', given: (h) => h.s.receive(encodeKeepalive()), want: [5, 1] },
    { name: 'OPEN in OpenConfirm', given: (h) => { h.s.receive(peerOpen()); h.s.receive(peerOpen()); }, want: [5, 2] },
    { name: 'OPEN in Established', given: (h) => { h.s.receive(peerOpen()); h.s.receive(encodeKeepalive()); h.s.receive(peerOpen()); }, want: [5, 3] },
    { name: 'bad marker', given: (h) => h.s.receive(Buffer.alloc(19)), want: [1, 1] },
  ];
  for (const r of rows) {
    const h = harness();
    h.s.start();
    r.given(h);
    assert.deepEqual([h.s.state, h.closed(), h.lastNotification()?.code, h.lastNotification()?.subcode], ['Idle', 1, ...r.want], r.name);
    assert.deepEqual(h.ends[0]!.sent, { code: r.want[0], subcode: r.want[1] }, r.name);
  }
});

test('iBGP: an OPEN carrying our own identifier is refused (2/3)', () => {
  const h = harness({ ...CFG, remoteAsn: 65010 });
  h.s.start();
  h.s.receive(peerOpen({ asn: 65010, routerId: '192.0.2.1' }));
  assert.deepEqual([h.lastNotification()?.code, h.lastNotification()?.subcode], [2, 3]);
});

test('a received NOTIFICATION ends the session without an answer; stop sends Cease 6/2', () => {
  const h = harness();
  h.s.start();
  h.s.receive(Buffer.from([...Buffer.alloc(16, 0xff), 0, 21, 3, 6, 4]));
  assert.deepEqual([h.s.state, h.types(), h.ends[0]!.received], ['Idle', [MsgType.Open], { code: 6, subcode: 4 }]);
  const g = harness();
  g.s.start();
  g.s.stop();
  assert.deepEqual([g.s.state, g.lastNotification()?.code, g.lastNotification()?.subcode], ['Idle', 6, 2]);
  g.s.stop();
  assert.equal(g.closed(), 1, 'stopping twice closes once');
});

test('reconnect backoff: doubling from 1 s, capped at 30 s, ±20 % jitter', () => {
  const at = (r: number) => (attempt: number) => backoffDelay(attempt, { baseMs: 1000, maxMs: 30_000, jitter: 0.2, random: () => r });
  assert.deepEqual([0, 1, 2, 3, 4, 5, 6, 40].map(at(0.5)), [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  assert.deepEqual([0, 5].map(at(0)), [800, 24000]);
  assert.deepEqual([0, 5].map(at(1)), [1200, 36000]);
});
