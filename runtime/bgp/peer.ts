import { connect, type Socket } from 'node:net';
import type { Timers } from '../timers.js';
import { backoffDelay, DEFAULT_BACKOFF, type BackoffOptions } from './backoff.js';
import { CeaseSub } from './errors.js';
import { Session, type SessionConfig, type SessionEnd, type SessionState } from './session.js';

/** One configured neighbour. */
export interface PeerConfig extends SessionConfig {
  remoteAddr: string;
  remotePort: number;
  /** source address of our connections; undefined lets the kernel choose */
  localAddr: string | undefined;
}

/** What the speaker hears from a peer. */
export interface PeerEvents {
  onEstablished(peer: BgpPeer, session: Session, socket: Socket): void;
  /** a session ended; `wasEstablished` when it had reached Established */
  onEnd(peer: BgpPeer, end: SessionEnd, wasEstablished: boolean): void;
}

interface Link { session: Session; socket: Socket; initiated: 'local' | 'remote' }

/** How long a connection attempt may take before it counts as failed. */
const CONNECT_TIMEOUT_MS = 5000;
/** How long a closing socket may linger after its last write before it is destroyed. */
export const LINGER_MS = 1000;

const ipToInt = (ip: string) => ip.split('.').reduce((n, o) => n * 256 + Number(o), 0);
export const plainAddress = (a: string | undefined) => (a ?? '').replace(/^::ffff:/, '');

/**
 * One neighbour: the Idle/Connect/Active part of the RFC 4271 FSM around its sessions. Connects
 * out when it has no connection, retrying with backoff (backoff.ts; reset once a session is
 * established); takes connections the listener accepted from its address; and resolves a
 * connection collision (§6.8) when a second session receives an OPEN: against an Established one
 * the newcomer is closed, otherwise the connection opened by the side with the lower BGP
 * Identifier is closed, both with Cease / Connection Collision Resolution.
 */
export class BgpPeer {
  private readonly links = new Set<Link>();
  private dialing: Socket | undefined;
  private retryTimer: unknown;
  private attempts = 0;
  private stopped = true;
  lastError: string | undefined;
  lastErrorAt: number | undefined;
  stateSince: number;
  private lastState: SessionState = 'Idle';

  constructor(readonly cfg: PeerConfig, private readonly timers: Timers, private readonly events: PeerEvents, private readonly backoff: BackoffOptions = DEFAULT_BACKOFF) {
    this.stateSince = timers.now();
  }

  /** The most advanced state of its sessions; Connect while dialing; Active while waiting to retry. */
  state(): SessionState {
    const order: SessionState[] = ['Established', 'OpenConfirm', 'OpenSent'];
    for (const s of order) for (const l of this.links) if (l.session.state === s) return s;
    if (this.stopped) return 'Idle';
    return this.dialing ? 'Connect' : 'Active';
  }

  /** The established session, if any. */
  established(): { session: Session; socket: Socket } | undefined {
    for (const l of this.links) if (l.session.state === 'Established') return l;
    return undefined;
  }

  /** Starts connecting (and accepting). */
  start(): void {
    this.stopped = false;
    this.attempts = 0;
    this.dial();
  }

  /** Takes a connection the listener accepted from this peer's address. */
  accept(socket: Socket): void {
    if (this.stopped) { socket.destroy(); return; }
    this.attach(socket, 'remote');
  }

  /**
   * Stops: no more attempts, every session ends with Cease / Administrative Shutdown. Resolves
   * once the sockets are closed or `timeoutMs` passed (then they are destroyed).
   */
  async stop(timeoutMs: number): Promise<void> {
    this.stopped = true;
    if (this.retryTimer !== undefined) this.timers.clear(this.retryTimer);
    this.retryTimer = undefined;
    this.dialing?.destroy();
    this.dialing = undefined;
    const closing = [...this.links].map((l) => new Promise<void>((resolve) => {
      if (l.socket.destroyed) { resolve(); return; }
      l.socket.once('close', () => resolve());
      l.session.stop(CeaseSub.AdministrativeShutdown, 'gslbd is shutting down');
    }));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(closing), new Promise<void>((r) => { timer = setTimeout(r, timeoutMs); })]);
    clearTimeout(timer);
    for (const l of this.links) l.socket.destroy();
    this.noteState();
  }

  private dial(): void {
    if (this.stopped || this.dialing || this.links.size > 0) return;
    const { remoteAddr: host, remotePort: port, localAddr } = this.cfg;
    const socket = connect({ host, port, ...(localAddr ? { localAddress: localAddr } : {}), timeout: CONNECT_TIMEOUT_MS });
    this.dialing = socket;
    this.noteState();
    const failed = (why: string) => {
      if (this.dialing !== socket) return;
      this.dialing = undefined;
      socket.destroy();
      this.recordError(`connect to ${host}:${port} failed: ${why}`);
      this.scheduleRetry();
    };
    socket.once('timeout', () => failed('timed out'));
    socket.once('error', (err) => failed(err.message));
    socket.once('close', () => failed('closed'));
    socket.once('connect', () => {
      if (this.dialing !== socket) return;
      this.dialing = undefined;
      socket.setTimeout(0);
      socket.removeAllListeners('timeout');
      socket.removeAllListeners('error');
      socket.removeAllListeners('close');
      if (this.stopped) { socket.destroy(); return; }
      this.attach(socket, 'local');
    });
  }

  private scheduleRetry(): void {
    if (this.stopped || this.retryTimer !== undefined || this.links.size > 0 || this.dialing) { this.noteState(); return; }
    const wait = backoffDelay(this.attempts++, this.backoff);
    this.retryTimer = this.timers.set(() => { this.retryTimer = undefined; this.dial(); }, wait);
    this.noteState();
  }

  private attach(socket: Socket, initiated: 'local' | 'remote'): void {
    socket.setNoDelay(true);
    let link: Link;
    let up = false;
    const io = {
      write: (b: Buffer) => { if (!socket.destroyed) socket.write(b); },
      end: () => {
        if (socket.destroyed) return;
        socket.end();
        this.timers.set(() => socket.destroy(), LINGER_MS);
      },
    };
    const session = new Session(this.cfg, io, this.timers, {
      onOpen: (open) => this.resolveCollision(link, open.bgpId),
      onEstablished: () => {
        this.attempts = 0;
        up = true;
        this.noteState();
        this.events.onEstablished(this, session, socket);
      },
      onEnd: (end) => {
        this.links.delete(link);
        if (end.reason !== 'gslbd is shutting down' && !end.reason.includes('Connection Collision')) this.recordError(end.reason);
        this.events.onEnd(this, end, up);
        this.scheduleRetry();
      },
    });
    link = { session, socket, initiated };
    this.links.add(link);
    socket.on('data', (chunk: Buffer) => session.receive(chunk));
    socket.on('error', (err) => this.recordError(err.message));
    socket.on('close', () => session.transportClosed());
    session.start();
    this.noteState();
  }

  /** RFC 4271 §6.8, run when `link` has just received an OPEN carrying `remoteId`. */
  private resolveCollision(link: Link, remoteId: string): void {
    for (const other of this.links) {
      if (other === link) continue;
      if (other.session.state === 'Established') {
        link.session.stop(CeaseSub.ConnectionCollision, 'connection collision: a session is established');
        return;
      }
      if (other.session.state !== 'OpenConfirm') continue;
      // the connection opened by the side with the higher identifier survives
      const keepLocal = ipToInt(this.cfg.routerId) > ipToInt(remoteId);
      const loser = (keepLocal ? [link, other].find((l) => l.initiated === 'remote') : [link, other].find((l) => l.initiated === 'local')) ?? link;
      loser.session.stop(CeaseSub.ConnectionCollision, 'connection collision resolution');
      if (loser === link) return;
    }
    this.noteState();
  }

  private recordError(msg: string): void {
    this.lastError = msg;
    this.lastErrorAt = this.timers.now();
  }

  /** Tracks when the visible state last changed. */
  noteState(): void {
    const s = this.state();
    if (s !== this.lastState) { this.lastState = s; this.stateSince = this.timers.now(); }
  }
}
