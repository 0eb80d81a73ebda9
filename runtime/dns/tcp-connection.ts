import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { DnsTcpMetrics } from './metrics.js';
import type { TcpConnectionTable, TcpEntry } from './tcp-table.js';

/** How the answer side writes to one TCP connection. */
export interface TcpReply {
  /** Queues one reply that already carries its 2-byte length prefix; a no-op once closed. */
  send(b: Buffer): void;
  /** Closes the connection (an internal error while answering). */
  close(): void;
  /** true on a DNS-over-TLS connection (a zone transfer with `dns.axfr.tlsOnly` needs one) */
  readonly encrypted: boolean;
  /**
   * Resolves true once at most `TRANSFER_LOW_WATER` bytes wait to be sent (at once when that is
   * already so), false when the connection closed or `timeoutMs` passed first; on a timeout the
   * connection is closed and counted as a write timeout. A long answer (a zone transfer) sends a
   * message, then waits here, so it never queues more than it can hand to the kernel.
   */
  drained(timeoutMs: number): Promise<boolean>;
}

/** Backlog below which a waiting long answer (a zone transfer) sends its next message. */
export const TRANSFER_LOW_WATER = 256 * 1024;

/**
 * Answers one complete message received over TCP (without its length prefix; a view into the
 * receive buffer, so copy it before keeping it past the call). Returns a promise when the answer
 * comes later; it must settle (never reject) once every reply of that message has been sent.
 */
export type TcpMessageHandler = (msg: Buffer, src: string, reply: TcpReply) => Promise<void> | undefined;

/** What connections share: the table they are counted in, the metrics, and the answer side. */
export interface TcpConnectionContext {
  table: TcpConnectionTable<TcpConnection>;
  metrics: DnsTcpMetrics;
  onMessage: TcpMessageHandler;
}

const EMPTY = Buffer.alloc(0);
/** A client that pipelines queries but never reads its replies is cut off past this backlog. */
const MAX_BACKLOG = 1 << 20;

/**
 * One DNS-over-TCP connection: splits the byte stream into length-prefixed messages (RFC 1035
 * §4.2.2, pipelined as RFC 7766 §6.2.1 allows), reports what it has in flight to the table after
 * every event, and keeps one timer at the deadline the table computed. A fired deadline, an
 * eviction or `close` removes it from the table at once, so its slot is free before the socket
 * has finished closing.
 */
export class TcpConnection implements TcpReply {
  entry!: TcpEntry<TcpConnection>;
  private acc: Buffer = EMPTY;
  private answering = 0;
  private timer: NodeJS.Timeout | undefined;
  private armed = Infinity;
  private readonly onDeadline = () => this.expire();
  private readonly onFlushed = () => { if (this.entry.unsentSince !== undefined && this.sock.writableLength === 0) this.sync(); };
  private readonly onSettled = () => { this.answering--; this.sync(); };
  readonly encrypted: boolean;

  constructor(private readonly sock: Socket, private readonly src: string, private readonly ctx: TcpConnectionContext) {
    // a TLSSocket says so (node:tls); a plain one has no such property
    this.encrypted = (sock as { encrypted?: boolean }).encrypted === true;
    sock.setNoDelay(true);
    sock.on('data', (chunk: Buffer) => this.receive(chunk));
    sock.on('error', () => this.close());
    sock.on('close', () => this.forget());
  }

  /** Starts the clock of a connection just added to the table. */
  start(entry: TcpEntry<TcpConnection>): void {
    this.entry = entry;
    this.sync();
  }

  send(b: Buffer): void {
    if (this.sock.destroyed) return;
    this.sock.write(b, this.onFlushed);
    if (this.sock.writableLength > MAX_BACKLOG) this.close();
  }

  close(): void {
    this.forget();
    this.sock.destroy();
  }

  drained(timeoutMs: number): Promise<boolean> {
    const sock = this.sock;
    if (sock.destroyed) return Promise.resolve(false);
    if (sock.writableLength <= TRANSFER_LOW_WATER) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        sock.off('drain', onDrain);
        sock.off('close', onClose);
        resolve(ok);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      const timer = setTimeout(() => { this.ctx.metrics.timeouts.write++; this.close(); done(false); }, timeoutMs);
      sock.on('drain', onDrain);
      sock.on('close', onClose);
    });
  }

  private receive(chunk: Buffer): void {
    // Bytes are only appended here: a trickling client does not move any deadline.
    let acc = this.acc.length === 0 ? chunk : Buffer.concat([this.acc, chunk]);
    while (acc.length >= 2) {
      const len = acc.readUInt16BE(0);
      if (acc.length < len + 2) break;
      const msg = acc.subarray(2, len + 2);
      acc = acc.subarray(len + 2);
      const p = this.ctx.onMessage(msg, this.src, this);
      if (this.sock.destroyed) return;
      if (p) { this.answering++; void p.then(this.onSettled, this.onSettled); }
    }
    this.acc = acc.length === 0 ? EMPTY : acc;
    this.sync();
  }

  /** Reports the connection's state to the table and moves the timer to the deadline it computed. */
  private sync(): void {
    const e = this.entry;
    if (!e.open) return;
    this.ctx.table.report(e, { partial: this.acc.length > 0, answering: this.answering > 0, unsent: this.sock.writableLength > 0 });
    this.arm(e.deadline);
  }

  private arm(deadline: number): void {
    if (deadline === this.armed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.armed = deadline;
    if (deadline !== Infinity) this.timer = setTimeout(this.onDeadline, Math.max(0, deadline - performance.now()));
  }

  private expire(): void {
    this.timer = undefined;
    this.armed = Infinity;
    const e = this.entry;
    if (!e.open) return;
    // A timer may fire a fraction of a millisecond before the deadline on the finer clock.
    if (performance.now() + 1 < e.deadline) { this.arm(e.deadline); return; }
    this.ctx.metrics.timeouts[e.deadlineKind ?? 'idle']++;
    this.close();
  }

  /** Frees the slot and the timer; called on close, eviction, deadline and the socket's close event. */
  private forget(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.entry?.open) return;
    this.ctx.table.remove(this.entry);
    this.ctx.metrics.open = this.ctx.table.size;
  }
}
