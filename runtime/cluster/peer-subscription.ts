import type { NatsLink } from './nats-link.js';

/**
 * Subscribes to `subject` once the link is first ready (the NATS client re-subscribes by itself
 * after a reconnect, so a second ready must not add a second subscription), parses each message as
 * JSON and hands peers' messages to `onPeer`. Malformed messages and this node's own messages are
 * ignored. Returns nothing; the subscription ends when the link closes.
 */
export function subscribePeers<T extends { node: string }>(link: NatsLink, subject: string, self: string, onPeer: (msg: T) => void): void {
  let subscribed = false;
  link.onReady(() => {
    if (subscribed || !link.nc) return;
    subscribed = true;
    link.nc.subscribe(subject, {
      callback: (err, m) => {
        if (err) return;
        let msg: T;
        try { msg = m.json<T>(); } catch { return; }
        if (msg.node === self) return;
        onPeer(msg);
      },
    });
  });
}
