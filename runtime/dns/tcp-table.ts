import { isIP } from 'node:net';

/** The limits of DNS over TCP, in milliseconds and connection counts (docs/dns.md "TCP limits"). */
export interface TcpLimits {
  /** a connection with nothing in flight is closed after this long without activity */
  idleMs: number;
  /** a message must arrive whole within this long of its first byte; a queued answer must be taken as fast */
  messageMs: number;
  /** open connections in total */
  maxConnections: number;
  /** open connections per source (an IPv4 address, an IPv6 /64) */
  maxPerSource: number;
}

/** The defaults of `dns.tcp.*` (schemas/config.v1.schema.json). */
export const TCP_DEFAULTS: Readonly<TcpLimits> = { idleMs: 10_000, messageMs: 2_000, maxConnections: 1024, maxPerSource: 32 };

/**
 * How long a connection must have been idle before it may be evicted. A client's first query
 * arrives right behind its handshake, but the server reads it only on a later turn of the event
 * loop; without this grace a burst of new connections would evict one another (and a real client
 * among them) before their first query is read.
 */
export const EVICT_GRACE_MS = 100;

/** Why a new connection was closed at once. */
export type TcpRefusal = 'per_source' | 'global_full';

/** Which deadline closed a connection: no activity, a message that did not arrive whole, an answer not read. */
export type TcpTimeoutKind = 'idle' | 'message' | 'write';

/** What to do with a new connection: take it, take it after closing `victim`, or close it at once. */
export type TcpAdmission<T> =
  | { kind: 'accept' }
  | { kind: 'evict'; victim: TcpEntry<T> }
  | { kind: 'refuse'; reason: TcpRefusal };

/** What a connection has in flight, reported after everything it does (bytes in, answer out, drain). */
export interface TcpActivity {
  /** part of a message is buffered */
  partial: boolean;
  /** an answer is being computed (a lookup that waits, a zone transfer) */
  answering: boolean;
  /** an answer is queued in user space because the client has not read the previous ones */
  unsent: boolean;
}

/**
 * One open connection in the table. `deadline` (on the table's clock, Infinity for none) and
 * `deadlineKind` say when and why the transport must close it; the table recomputes them on
 * every `report`.
 */
export class TcpEntry<T> {
  deadline = Infinity;
  deadlineKind: TcpTimeoutKind | undefined;
  /** when the idle clock last restarted (meaningful while idle) */
  idleSince = 0;
  /** first byte of the buffered partial message */
  messageSince: number | undefined;
  /** when an answer started waiting in user space for the client to read */
  unsentSince: number | undefined;
  idle = true;
  open = true;
  // Doubly linked list of idle entries, least recently active first: O(1) to move and to pick.
  prev: TcpEntry<T> | undefined;
  next: TcpEntry<T> | undefined;

  constructor(readonly source: string, readonly value: T) {}
}

/**
 * The bookkeeping of the TCP listener, without sockets or timers: per-source counts, the admission
 * decision, the idle connections ordered by last activity, and each connection's deadline. The
 * clock is injected (milliseconds), so tests drive it by hand.
 *
 * A connection is idle when nothing is in flight (no partial message, no answer being computed,
 * no answer waiting to be read); only idle connections are evicted. RFC 7766 §6.2.3: servers
 * should limit connections in total and may limit them per source, and at the total limit should
 * close idle connections or refuse new ones.
 */
export class TcpConnectionTable<T> {
  private readonly perSource = new Map<string, number>();
  private head: TcpEntry<T> | undefined;
  private tail: TcpEntry<T> | undefined;
  private count = 0;
  private idleCount = 0;

  constructor(private readonly limits: TcpLimits, private readonly now: () => number, private readonly graceMs = EVICT_GRACE_MS) {}

  /** Open connections. */
  get size(): number { return this.count; }

  /** Open connections that are idle (evictable). */
  get idle(): number { return this.idleCount; }

  /** Open connections from one source key. */
  sourceCount(source: string): number { return this.perSource.get(source) ?? 0; }

  /** The idle connection with the oldest last activity, the one eviction picks. */
  oldestIdle(): TcpEntry<T> | undefined { return this.head; }

  /**
   * Decides on a new connection from `source` (a key from `sourceKey`) without changing the table:
   * refuse when the source is at its cap; at the global cap evict the connection idle the longest,
   * or refuse when none has been idle for the grace period. The caller closes the victim (and
   * `remove`s it) before `add`.
   */
  admit(source: string): TcpAdmission<T> {
    if (this.sourceCount(source) >= this.limits.maxPerSource) return { kind: 'refuse', reason: 'per_source' };
    if (this.count < this.limits.maxConnections) return { kind: 'accept' };
    // The head is the longest idle: if it is within its grace, every idle connection is.
    const h = this.head;
    return h && this.now() - h.idleSince >= this.graceMs ? { kind: 'evict', victim: h } : { kind: 'refuse', reason: 'global_full' };
  }

  /** Adds an admitted connection; it starts idle, its idle clock running from now. */
  add(source: string, value: T): TcpEntry<T> {
    const e = new TcpEntry(source, value);
    this.perSource.set(source, this.sourceCount(source) + 1);
    this.count++;
    this.becomeIdle(e, this.now());
    return e;
  }

  /**
   * Records what `e` has in flight after it did something, and recomputes its deadline:
   * a partial message must be complete `messageMs` after its first byte (more bytes do not extend
   * it); an unread answer must be taken within `messageMs`; while an answer is computed there is no
   * deadline (lookups have their own); with nothing in flight the idle clock restarts now.
   */
  report(e: TcpEntry<T>, a: TcpActivity): void {
    if (!e.open) return;
    const now = this.now();
    e.messageSince = a.partial ? (e.messageSince ?? now) : undefined;
    e.unsentSince = a.unsent ? (e.unsentSince ?? now) : undefined;
    if (!a.partial && !a.answering && !a.unsent) {
      this.unlink(e);
      this.becomeIdle(e, now);
      return;
    }
    this.unlink(e);
    e.deadline = Infinity;
    e.deadlineKind = undefined;
    if (e.messageSince !== undefined) { e.deadline = e.messageSince + this.limits.messageMs; e.deadlineKind = 'message'; }
    if (e.unsentSince !== undefined && e.unsentSince + this.limits.messageMs < e.deadline) {
      e.deadline = e.unsentSince + this.limits.messageMs;
      e.deadlineKind = 'write';
    }
  }

  /** Removes a closed connection; a second call is a no-op. */
  remove(e: TcpEntry<T>): void {
    if (!e.open) return;
    e.open = false;
    this.unlink(e);
    this.count--;
    const n = this.sourceCount(e.source) - 1;
    if (n > 0) this.perSource.set(e.source, n);
    else this.perSource.delete(e.source);
  }

  private becomeIdle(e: TcpEntry<T>, now: number): void {
    e.idle = true;
    e.idleSince = now;
    e.deadline = now + this.limits.idleMs;
    e.deadlineKind = 'idle';
    e.prev = this.tail;
    e.next = undefined;
    if (this.tail) this.tail.next = e;
    else this.head = e;
    this.tail = e;
    this.idleCount++;
  }

  private unlink(e: TcpEntry<T>): void {
    if (!e.idle) return;
    e.idle = false;
    if (e.prev) e.prev.next = e.next;
    else this.head = e.next;
    if (e.next) e.next.prev = e.prev;
    else this.tail = e.prev;
    e.prev = undefined;
    e.next = undefined;
    this.idleCount--;
  }
}

/**
 * The key a source is counted under: the IPv4 address (also when written IPv4-mapped, as a
 * dual-stack socket reports it), or the /64 of an IPv6 address, since one host usually holds a
 * whole /64 and would otherwise open connections from as many addresses as it likes.
 */
export function sourceKey(address: string): string {
  if (address.startsWith('::ffff:') && isIP(address.slice(7)) === 4) return address.slice(7);
  if (isIP(address) !== 6) return address;
  const [left = '', right] = address.toLowerCase().split('::');
  const head = left === '' ? [] : left.split(':');
  const tail = right === undefined || right === '' ? [] : right.split(':');
  // A trailing dotted quad (`64:ff9b::192.0.2.1`) stands for two groups.
  const tailGroups = tail.length + (tail.at(-1)?.includes('.') ? 1 : 0);
  const groups = right === undefined ? head : [...head, ...Array<string>(8 - head.length - tailGroups).fill('0'), ...tail];
  return `${groups.slice(0, 4).map((g) => Number.parseInt(g, 16).toString(16)).join(':')}::/64`;
}
