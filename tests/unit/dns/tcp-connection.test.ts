import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { DnsTcpMetrics } from '../../../runtime/dns/metrics.js';
import { TcpConnection, type TcpMessageHandler } from '../../../runtime/dns/tcp-connection.js';
import { TcpConnectionTable, type TcpLimits } from '../../../runtime/dns/tcp-table.js';

/**
 * The parts of a net.Socket a connection uses. `stuck` keeps written bytes queued (a client that
 * does not read) until `flush`.
 */
class FakeSocket extends EventEmitter {
  destroyed = false;
  writableLength = 0;
  stuck = false;
  readonly written: Buffer[] = [];
  private callbacks: (() => void)[] = [];
  setNoDelay(): this { return this; }
  write(b: Buffer, cb?: () => void): boolean {
    this.written.push(b);
    if (this.stuck) { this.writableLength += b.length; if (cb) this.callbacks.push(cb); } else if (cb) setImmediate(cb);
    return true;
  }
  flush(): void { this.writableLength = 0; const cbs = this.callbacks; this.callbacks = []; for (const cb of cbs) cb(); }
  destroy(): this {
    if (!this.destroyed) { this.destroyed = true; setImmediate(() => this.emit('close')); }
    return this;
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const frame = (...bytes: number[]) => { const b = Buffer.from(bytes); const h = Buffer.alloc(2); h.writeUInt16BE(b.length); return Buffer.concat([h, b]); };

/** One connection on a fake socket, in a table with short deadlines on the real clock. */
function setup(onMessage: TcpMessageHandler, limits: Partial<TcpLimits> = {}) {
  const table = new TcpConnectionTable<TcpConnection>({ idleMs: 300, messageMs: 150, maxConnections: 10, maxPerSource: 10, ...limits }, () => performance.now());
  const metrics = new DnsTcpMetrics();
  const sock = new FakeSocket();
  const c = new TcpConnection(sock as unknown as Socket, '192.0.2.1', { table, metrics, onMessage });
  c.start(table.add('192.0.2.1', c));
  return { table, metrics, sock, c };
}

test('framing: a message split over chunks, two in one chunk, each answered once', async () => {
  const seen: string[] = [];
  const { sock } = setup((msg, _src, reply) => { seen.push(msg.toString('hex')); reply.send(frame(msg[0]!)); return undefined; });
  const two = Buffer.concat([frame(1, 2, 3), frame(4)]);
  sock.emit('data', two.subarray(0, 1));
  sock.emit('data', two.subarray(1, 4));
  assert.deepEqual(seen, [], 'nothing before a message is whole');
  sock.emit('data', two.subarray(4));
  assert.deepEqual(seen, ['010203', '04']);
  assert.equal(sock.written.length, 2);
  assert.equal(sock.destroyed, false);
});

test('deadlines on one connection: idle, message, write; none while an answer is computed', async () => {
  const rows: { name: string; run: (s: ReturnType<typeof setup>, resolve: () => void) => Promise<void>; closed: boolean; kind?: 'idle' | 'message' | 'write' }[] = [
    { name: 'silent connection: idle timeout', run: () => sleep(500), closed: true, kind: 'idle' },
    { name: 'a message every 50 ms keeps it open', run: async ({ sock }) => { for (let i = 0; i < 6; i++) { sock.emit('data', frame(9)); await sleep(50); } }, closed: false },
    {
      name: 'body trickled after the length: message deadline',
      run: async ({ sock }) => { sock.emit('data', Buffer.from([0, 20])); for (let i = 0; i < 10; i++) { await sleep(20); if (!sock.destroyed) sock.emit('data', Buffer.from([0])); } await sleep(100); },
      closed: true, kind: 'message',
    },
    { name: 'answer not read: write deadline', run: async ({ sock }) => { sock.stuck = true; sock.emit('data', frame(9)); await sleep(350); }, closed: true, kind: 'write' },
    {
      name: 'answer read in time: idle again',
      run: async ({ sock }) => { sock.stuck = true; sock.emit('data', frame(9)); await sleep(20); sock.flush(); await sleep(200); },
      closed: false,
    },
    { name: 'answer being computed past every deadline', run: async ({ sock }) => { sock.emit('data', frame(7)); await sleep(500); }, closed: false },
    {
      name: 'computed answer sent: the idle clock starts then',
      run: async ({ sock }, resolve) => { sock.emit('data', frame(7)); await sleep(200); resolve(); await sleep(100); assert.equal(sock.destroyed, false); await sleep(350); },
      closed: true, kind: 'idle',
    },
  ];
  for (const r of rows) {
    let resolve = () => {};
    const pending = new Promise<void>((res) => { resolve = res; });
    const s = setup((msg, _src, reply) => {
      if (msg[0] === 7) return pending.then(() => reply.send(frame(1)));
      reply.send(frame(1));
      return undefined;
    });
    await r.run(s, resolve);
    assert.equal(s.sock.destroyed, r.closed, r.name);
    const counted = Object.entries(s.metrics.timeouts).filter(([, v]) => v > 0).map(([k]) => k);
    assert.deepEqual(counted, r.kind ? [r.kind] : [], `${r.name}: timeout counted`);
    if (r.closed) assert.equal(s.table.size, 0, `${r.name}: slot freed`);
    resolve();
    s.c.close();
  }
});

test('a client that never reads is cut off past 1 MiB of queued replies', () => {
  const { sock, table } = setup((_msg, _src, reply) => { reply.send(Buffer.alloc(300_000)); return undefined; });
  sock.stuck = true;
  for (let i = 0; i < 3; i++) sock.emit('data', frame(1));
  assert.equal(sock.destroyed, false, '900 kB queued');
  sock.emit('data', frame(1));
  assert.equal(sock.destroyed, true, '1.2 MB queued');
  assert.equal(table.size, 0);
});
