import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { WebSocket } from 'ws';
import { WsHub } from '../../../runtime/ws/hub.js';

/** A socket stand-in whose send queue only drains when the test says so. */
class SlowSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  bufferedAmount = 0;
  sent: string[] = [];
  terminated = false;
  send(text: string) { this.sent.push(text); this.bufferedAmount += text.length; }
  terminate() { this.terminated = true; this.readyState = 3; this.emit('close'); }
  close() { this.readyState = 3; this.emit('close'); }
}

test('hub: a client that stops reading is dropped once its buffer passes the limit; others keep receiving', () => {
  const drops: unknown[] = [];
  const hub = new WsHub(1000, (c) => drops.push(c));
  const slow = new SlowSocket();
  const fast = new SlowSocket();
  hub.add({ socket: slow as unknown as WebSocket, tenantId: null });
  hub.add({ socket: fast as unknown as WebSocket, tenantId: null });
  const msg = { type: 'health_update', payload: { pad: 'x'.repeat(200) } };
  for (let i = 0; i < 10; i++) {
    hub.broadcast(msg, () => true);
    fast.bufferedAmount = 0; // the fast client drains its queue
  }
  assert.equal(slow.terminated, true);
  assert.ok(slow.sent.length >= 3 && slow.sent.length < 10, `slow got ${slow.sent.length} before the drop`);
  assert.equal(fast.sent.length, 10);
  assert.equal(hub.size, 1);
  assert.equal(hub.dropped, 1);
  assert.equal(drops.length, 1);
});

test('hub: visibility filter and closed clients', () => {
  const hub = new WsHub();
  const a = new SlowSocket();
  const b = new SlowSocket();
  hub.add({ socket: a as unknown as WebSocket, tenantId: 't1' });
  hub.add({ socket: b as unknown as WebSocket, tenantId: 't2' });
  hub.broadcast({ type: 'x', payload: 1 }, (c) => c.tenantId === 't1');
  assert.deepEqual([a.sent.length, b.sent.length], [1, 0]);
  b.close();
  assert.equal(hub.size, 1);
});
