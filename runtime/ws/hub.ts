import type { WebSocket } from 'ws';

/** Bytes a client may have queued before it is dropped as too slow. */
export const MAX_BUFFERED_BYTES = 1024 * 1024;

/** One connected dashboard. */
export interface WsClient {
  socket: WebSocket;
  /** tenant whose events the client sees; null sees all */
  tenantId: string | null;
}

/**
 * The set of open WebSocket clients. Sends serialise a message once and skip clients that may
 * not see it. A client whose socket has more than `maxBuffered` bytes queued (it reads slower than
 * events arrive) is terminated rather than letting the daemon's memory grow; the dashboard
 * reconnects and reloads its snapshot.
 */
export class WsHub {
  private readonly clients = new Set<WsClient>();
  /** clients dropped for being too slow */
  dropped = 0;
  constructor(private readonly maxBuffered = MAX_BUFFERED_BYTES, private readonly onDrop: (c: WsClient) => void = () => {}) {}

  get size(): number {
    return this.clients.size;
  }

  add(c: WsClient): void {
    this.clients.add(c);
    c.socket.once('close', () => this.clients.delete(c));
  }

  all(): IterableIterator<WsClient> {
    return this.clients.values();
  }

  /** Sends `text` to one client unless it is closed or too far behind (then it is dropped). */
  sendText(c: WsClient, text: string): void {
    if (c.socket.readyState !== c.socket.OPEN) return;
    if (c.socket.bufferedAmount + text.length > this.maxBuffered) {
      this.dropped++;
      this.clients.delete(c);
      this.onDrop(c);
      c.socket.terminate();
      return;
    }
    c.socket.send(text);
  }

  /** Sends a message to every client allowed by `visible`. */
  broadcast(msg: { type: string; payload: unknown }, visible: (c: WsClient) => boolean): void {
    if (this.clients.size === 0) return;
    const text = JSON.stringify(msg);
    for (const c of [...this.clients]) if (visible(c)) this.sendText(c, text);
  }

  /** Closes every client (shutdown). */
  closeAll(code = 1001, reason = 'server shutting down'): void {
    for (const c of this.clients) c.socket.close(code, reason);
    this.clients.clear();
  }
}
