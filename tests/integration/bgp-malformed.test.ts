import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer, type Socket } from 'node:net';
import { api, startTestDaemon } from '../helpers/daemon.js';
import { freePort } from '../helpers/proc.js';
import { encodeKeepalive, frameMessage, FrameReader, MsgType, type RawMessage } from '../../runtime/bgp/header.js';
import { decodeOpen, encodeOpen } from '../../runtime/bgp/open.js';
import { decodeUpdate, updateMessage } from '../../runtime/bgp/update.js';
import { formatPrefix4 } from '../../runtime/bgp/prefix.js';

const PEER_AS = 65020;

/** A raw BGP client on loopback: what it received, and whether the daemon closed the connection. */
class RawPeer {
  readonly messages: RawMessage[] = [];
  closed = false;
  private readonly reader = new FrameReader();
  private constructor(readonly socket: Socket) {
    socket.on('data', (c: Buffer) => { this.messages.push(...this.reader.push(c)); });
    socket.on('close', () => { this.closed = true; });
    socket.on('error', () => {});
  }
  static wrap(s: Socket): RawPeer {
    return new RawPeer(s);
  }
  static open(port: number, localAddress = '127.0.0.1'): Promise<RawPeer> {
    return new Promise((resolve, reject) => {
      const s = connect({ host: '127.0.0.1', port, localAddress });
      s.once('error', reject);
      s.once('connect', () => resolve(new RawPeer(s)));
    });
  }
  async next(type: number, ms = 3000): Promise<RawMessage> {
    const end = Date.now() + ms;
    for (;;) {
      const i = this.messages.findIndex((m) => m.type === type);
      if (i >= 0) return this.messages.splice(i, 1)[0]!;
      if (Date.now() > end) throw new Error(`no message of type ${type} within ${ms} ms (got ${this.messages.map((m) => m.type).join(',')}, closed ${this.closed})`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  async waitClosed(ms = 3000): Promise<void> {
    const end = Date.now() + ms;
    while (!this.closed) {
      if (Date.now() > end) throw new Error('the daemon did not close the connection');
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

const header = (length: number, type: number, marker = 0xff) => {
  const b = Buffer.alloc(19, marker);
  b.writeUInt16BE(length, 16);
  b.writeUInt8(type, 18);
  return b;
};
const open = (o: Partial<{ asn: number; holdTime: number; routerId: string }> = {}) => encodeOpen({ asn: PEER_AS, holdTime: 9, routerId: '10.0.0.9', ...o });
/** our OPEN with its version byte replaced */
const openVersion = (v: number) => { const m = open(); m.writeUInt8(v, 19); return m; };
/** an OPEN whose only optional parameter is type 1 (Authentication, deprecated by RFC 5492) */
const openAuthParam = () => {
  const body = Buffer.from([4, 0xfe, 0x4c, 0, 9, 10, 0, 0, 9, 4, 1, 2, 0, 0]);
  return frameMessage(MsgType.Open, body);
};
const update = updateMessage;
const ORIGIN = Buffer.from([0x40, 1, 1, 0]);
// 4-octet ASNs: both OPENs carry the capability (RFC 6793)
const AS_PATH = Buffer.from([0x40, 2, 6, 2, 1, 0, 0, 0xfe, 0x4c]);
const NEXT_HOP = Buffer.from([0x40, 3, 4, 127, 0, 0, 1]);
const NLRI = Buffer.from([24, 10, 1, 2]);

/** Each malformed input, whether it needs an established session first, and the NOTIFICATION it must get (RFC 4271 §6). */
const CASES: { name: string; established?: boolean; send: Buffer; want: [number, number]; data?: Buffer }[] = [
  { name: 'bad marker', send: Buffer.concat([header(19, 4, 0x00)]), want: [1, 1] },
  { name: 'length above 4096', send: header(5000, 4), want: [1, 2], data: Buffer.from([0x13, 0x88]) },
  { name: 'length below 19', send: header(18, 4), want: [1, 2], data: Buffer.from([0, 18]) },
  { name: 'KEEPALIVE longer than 19', send: Buffer.concat([header(20, 4), Buffer.from([0])]), want: [1, 2], data: Buffer.from([0, 20]) },
  { name: 'bad type', send: header(19, 7), want: [1, 3], data: Buffer.from([7]) },
  { name: 'truncated OPEN', send: Buffer.concat([header(25, 1), Buffer.from([4, 0xfe, 0x4c, 0, 9, 10])]), want: [1, 2], data: Buffer.from([0, 25]) },
  { name: 'bad version', send: openVersion(3), want: [2, 1], data: Buffer.from([0, 4]) },
  { name: 'hold time 1', send: open({ holdTime: 1 }), want: [2, 6] },
  { name: 'hold time 2', send: open({ holdTime: 2 }), want: [2, 6] },
  { name: 'unknown optional parameter', send: openAuthParam(), want: [2, 4] },
  { name: 'wrong peer AS', send: open({ asn: 65099 }), want: [2, 2] },
  { name: 'BGP identifier 0.0.0.0', send: open({ routerId: '0.0.0.0' }), want: [2, 3] },
  { name: 'KEEPALIVE before OPEN', send: encodeKeepalive(), want: [5, 1] },
  { name: 'UPDATE attributes running past the message', established: true, send: update(Buffer.alloc(0), Buffer.from([0x40, 1, 9, 0]), Buffer.alloc(0)), want: [3, 1] },
  { name: 'UPDATE ORIGIN of length 5', established: true, send: update(Buffer.alloc(0), Buffer.from([0x40, 1, 5, 0, 0, 0, 0, 0]), Buffer.alloc(0)), want: [3, 5] },
  { name: 'UPDATE ORIGIN value 7', established: true, send: update(Buffer.alloc(0), Buffer.concat([Buffer.from([0x40, 1, 1, 7]), AS_PATH, NEXT_HOP]), NLRI), want: [3, 6] },
  { name: 'UPDATE optional flag on ORIGIN', established: true, send: update(Buffer.alloc(0), Buffer.from([0xc0, 1, 1, 0]), Buffer.alloc(0)), want: [3, 4] },
  { name: 'UPDATE unknown well-known attribute', established: true, send: update(Buffer.alloc(0), Buffer.from([0x40, 99, 1, 0]), Buffer.alloc(0)), want: [3, 2] },
  { name: 'UPDATE announcement without NEXT_HOP', established: true, send: update(Buffer.alloc(0), Buffer.concat([ORIGIN, AS_PATH]), NLRI), want: [3, 3], data: Buffer.from([3]) },
  { name: 'UPDATE AS_PATH segment running past the attribute', established: true, send: update(Buffer.alloc(0), Buffer.concat([ORIGIN, Buffer.from([0x40, 2, 6, 2, 5, 0, 0, 0xfe, 0x4c]), NEXT_HOP]), NLRI), want: [3, 11] },
  { name: 'UPDATE prefix length 33', established: true, send: update(Buffer.alloc(0), Buffer.concat([ORIGIN, AS_PATH, NEXT_HOP]), Buffer.from([33, 1, 2, 3, 4, 5])), want: [3, 10] },
  { name: 'UPDATE attribute twice', established: true, send: update(Buffer.alloc(0), Buffer.concat([ORIGIN, ORIGIN]), Buffer.alloc(0)), want: [3, 1] },
  { name: 'OPEN in Established', established: true, send: open(), want: [5, 3] },
];

test('malformed BGP messages get the RFC 4271 NOTIFICATION and a closed connection; the daemon keeps running and a correct peer then gets its routes', async (t) => {
  const d = await startTestDaemon({
    bgp: {
      enabled: true, localASN: 65010, routerID: '192.0.2.1', listenAddr: '127.0.0.1', listenPort: 0, holdTime: '9s', keepAliveTime: '3s',
      // nothing listens there: the daemon's own connection attempts fail and it waits for us
      peers: [{ remoteASN: PEER_AS, remoteAddr: '127.0.0.1', remotePort: await freePort() }],
      nodePrefixes: ['203.0.113.0/24', '198.51.100.128/25'],
    },
  } as never);
  t.after(() => d.stop());
  const port = d.ports.bgpPort!;

  for (const c of CASES) {
    const p = await RawPeer.open(port);
    const ours = decodeOpen((await p.next(MsgType.Open)).body);
    assert.equal(ours.myAs, 65010, c.name);
    if (c.established) {
      p.socket.write(open());
      p.socket.write(encodeKeepalive());
      await p.next(MsgType.Keepalive);
      await p.next(MsgType.Update); // the node prefixes
    }
    p.socket.write(c.send);
    const n = (await p.next(MsgType.Notification)).body;
    assert.deepEqual([n.readUInt8(0), n.readUInt8(1)], c.want, c.name);
    if (c.data) assert.deepEqual(n.subarray(2), c.data, `${c.name}: data`);
    await p.waitClosed();
    p.socket.destroy();
  }

  // an address that is not a configured peer is refused with Cease / Connection Rejected
  const stranger = await RawPeer.open(port, '127.0.0.2');
  const rejected = (await stranger.next(MsgType.Notification)).body;
  assert.deepEqual([rejected.readUInt8(0), rejected.readUInt8(1)], [6, 5]);
  await stranger.waitClosed();

  // still running: the API answers, and a well-behaved peer reaches Established and gets the routes
  const status = (await api(d.url, 'GET', '/api/v1/bgp')).body;
  assert.equal(status.enabled, true);
  assert.match(status.peers[0].lastError, /OPEN Message Error|UPDATE Message Error|Finite State Machine Error|Message Header Error/);
  const good = await RawPeer.open(port);
  const theirs = decodeOpen((await good.next(MsgType.Open)).body);
  assert.deepEqual([theirs.holdTime, theirs.bgpId, theirs.fourOctetAs, theirs.families], [9, '192.0.2.1', 65010, ['1/1']]);
  good.socket.write(open({ holdTime: 6 }));
  good.socket.write(encodeKeepalive());
  await good.next(MsgType.Keepalive);
  const u = decodeUpdate((await good.next(MsgType.Update)).body, true);
  assert.deepEqual(u.nlri.map(formatPrefix4).sort(), ['198.51.100.128/25', '203.0.113.0/24']);
  assert.deepEqual([u.origin, u.asPath, u.nextHop, u.localPref], [0, [[65010]], '127.0.0.1', undefined]);
  const est = (await api(d.url, 'GET', '/api/v1/bgp')).body.peers[0];
  assert.deepEqual([est.state, est.holdTime, est.keepAliveTime], ['Established', 6, 2], 'hold = min(9, 6); keepalive = min(3, 6/3)');
  // the negotiated keepalive (2 s) arrives well before BIRD-style hold expiry
  await good.next(MsgType.Keepalive, 3000);
  good.socket.destroy();
});

/** Accepts the daemon's own connection attempts on a free port, as RawPeers. */
async function rawListener(): Promise<{ port: number; next: () => Promise<RawPeer>; close: () => Promise<void> }> {
  const waiting: RawPeer[] = [];
  const srv = createServer((s) => { waiting.push(RawPeer.wrap(s)); });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  return {
    port: (srv.address() as { port: number }).port,
    next: async () => {
      const end = Date.now() + 5000;
      while (!waiting.length) {
        if (Date.now() > end) throw new Error('the daemon did not connect');
        await new Promise((r) => setTimeout(r, 10));
      }
      return waiting.shift()!;
    },
    close: () => new Promise<void>((r) => { srv.close(() => r()); }),
  };
}

// RFC 4271 §6.8: with a connection each way in OpenConfirm, the one opened by the side with the
// higher BGP Identifier survives; the other gets Cease / Connection Collision Resolution (6/7).
for (const row of [
  { name: 'our identifier is higher: the connection we opened survives', remoteId: '10.0.0.9', survivor: 'outgoing' },
  { name: 'the peer\'s identifier is higher: the connection it opened survives', remoteId: '198.51.100.9', survivor: 'incoming' },
] as const) {
  test(`connection collision: ${row.name}`, async (t) => {
    const remote = await rawListener();
    const d = await startTestDaemon({
      bgp: {
        enabled: true, localASN: 65010, routerID: '192.0.2.1', listenAddr: '127.0.0.1', listenPort: 0, holdTime: '9s', keepAliveTime: '3s',
        peers: [{ remoteASN: PEER_AS, remoteAddr: '127.0.0.1', remotePort: remote.port }], nodePrefixes: ['203.0.113.0/24'],
      },
    } as never);
    t.after(async () => { await d.stop(); await remote.close(); });
    const outgoing = await remote.next();
    await outgoing.next(MsgType.Open);
    outgoing.socket.write(open({ routerId: row.remoteId }));
    await outgoing.next(MsgType.Keepalive); // OpenConfirm
    const incoming = await RawPeer.open(d.ports.bgpPort!);
    await incoming.next(MsgType.Open);
    incoming.socket.write(open({ routerId: row.remoteId }));
    const [winner, loser] = row.survivor === 'outgoing' ? [outgoing, incoming] : [incoming, outgoing];
    const n = (await loser.next(MsgType.Notification)).body;
    assert.deepEqual([n.readUInt8(0), n.readUInt8(1)], [6, 7]);
    await loser.waitClosed();
    if (winner === incoming) await incoming.next(MsgType.Keepalive);
    winner.socket.write(encodeKeepalive());
    const u = decodeUpdate((await winner.next(MsgType.Update)).body, true);
    assert.deepEqual(u.nlri.map(formatPrefix4), ['203.0.113.0/24']);
    assert.equal((await api(d.url, 'GET', '/api/v1/bgp')).body.peers[0].state, 'Established');
    winner.socket.destroy();
  });
}
