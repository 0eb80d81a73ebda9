import type { Timers } from '../timers.js';
import { BgpProtocolError, CeaseSub, describeNotification, ErrCode, FsmSub, OpenSub } from './errors.js';
import { decodeNotification, encodeKeepalive, encodeNotification, FrameReader, MsgType, type RawMessage } from './header.js';
import { decodeOpen, encodeOpen, peerAsOf, type OpenMessage } from './open.js';
import { decodeUpdate } from './update.js';

/** The session states of RFC 4271 §8.2.2. Idle, Connect and Active belong to the peer (peer.ts). */
export type SessionState = 'Idle' | 'Connect' | 'Active' | 'OpenSent' | 'OpenConfirm' | 'Established';

/** What one session needs to know about both ends. Times in whole seconds. */
export interface SessionConfig {
  localAsn: number;
  routerId: string;
  remoteAsn: number;
  /** our proposed hold time: 0 (no keepalives) or at least 3 */
  holdTime: number;
  /** our keepalive interval; the negotiated one is at most a third of the hold time */
  keepAliveTime: number;
}

/** The socket as the session sees it: write bytes, close after what was written. */
export interface Transport {
  write(buf: Buffer): void;
  end(): void;
}

/** Why a session ended: the NOTIFICATION we sent or received, or the transport's fate. */
export interface SessionEnd { reason: string; sent?: { code: number; subcode: number }; received?: { code: number; subcode: number } }

export interface SessionEvents {
  /** the peer's OPEN was accepted; the peer may stop this session (or another) here: collision resolution */
  onOpen?(open: OpenMessage): void;
  onEstablished?(): void;
  onEnd?(end: SessionEnd): void;
}

/** Hold timer while waiting for the peer's OPEN (RFC 4271 §8.2.2: "a large value", 4 minutes suggested). */
export const OPEN_HOLD_S = 240;

/**
 * The negotiated timers (RFC 4271 §4.2, §10): hold = min of both proposals (0 turns keepalives
 * off); keepalive = the configured one, but at most a third of the hold time and at least 1 s.
 */
export function negotiateTimers(localHold: number, remoteHold: number, keepAlive: number): { hold: number; keepAlive: number } {
  const hold = Math.min(localHold, remoteHold);
  if (hold === 0) return { hold: 0, keepAlive: 0 };
  return { hold, keepAlive: Math.max(1, Math.min(keepAlive, Math.floor(hold / 3))) };
}

/**
 * One BGP session over one TCP connection, from OpenSent to Established (RFC 4271 §8): sends our
 * OPEN on `start`, checks the peer's (version, AS, hold time, identifier), runs the hold and
 * keepalive timers, and answers every protocol error with its NOTIFICATION before closing.
 * Received UPDATEs are checked and dropped: gslbd announces, it never installs routes.
 * Pure apart from the transport and the injected timers, so tests drive it with a fake clock.
 */
export class Session {
  state: SessionState = 'Idle';
  remote: OpenMessage | undefined;
  fourOctet = false;
  hold = 0;
  keepAlive = 0;
  establishedAt: number | undefined;
  private readonly reader = new FrameReader();
  private holdTimer: unknown;
  private keepAliveTimer: unknown;

  constructor(
    readonly cfg: SessionConfig,
    private readonly io: Transport,
    private readonly timers: Timers,
    private readonly events: SessionEvents = {},
  ) {}

  /** Sends our OPEN and waits for the peer's (OpenSent). */
  start(): void {
    this.io.write(encodeOpen({ asn: this.cfg.localAsn, holdTime: this.cfg.holdTime, routerId: this.cfg.routerId }));
    this.state = 'OpenSent';
    this.armHold(OPEN_HOLD_S);
  }

  /** Bytes from the transport. Every complete message is handled; a bad one ends the session. */
  receive(chunk: Buffer): void {
    if (this.state === 'Idle') return;
    try {
      for (const m of this.reader.push(chunk)) {
        this.handle(m);
        if (this.ended()) return;
      }
    } catch (err) {
      if (!(err instanceof BgpProtocolError)) throw err;
      this.fail(err.code, err.subcode, err.data, err.detail);
    }
  }

  /** The transport closed under us (peer went away, reset). */
  transportClosed(reason = 'connection closed by peer'): void {
    this.end({ reason });
  }

  /** Sends UPDATE messages; only in Established, else ignored. Restarts the keepalive timer. */
  sendMessages(msgs: Buffer[]): void {
    if (this.state !== 'Established') return;
    for (const m of msgs) this.io.write(m);
    if (msgs.length) this.armKeepAlive();
  }

  /** Ends the session with a Cease NOTIFICATION (default Administrative Shutdown, RFC 4486). */
  stop(subcode: number = CeaseSub.AdministrativeShutdown, reason = 'stopped'): void {
    if (this.state === 'Idle') return;
    this.fail(ErrCode.Cease, subcode, Buffer.alloc(0), reason);
  }

  /** true once the session is over (a method: the compiler would narrow a field read across calls) */
  ended(): boolean {
    return this.state === 'Idle';
  }

  private handle(m: RawMessage): void {
    if (m.type === MsgType.Notification) {
      const n = decodeNotification(m.body);
      this.end({ reason: `received ${describeNotification(n.code, n.subcode)}`, received: { code: n.code, subcode: n.subcode } });
      return;
    }
    switch (this.state) {
      case 'OpenSent':
        if (m.type !== MsgType.Open) throw new BgpProtocolError(ErrCode.Fsm, FsmSub.InOpenSent, Buffer.alloc(0), `message type ${m.type} before OPEN`);
        this.acceptOpen(decodeOpen(m.body));
        return;
      case 'OpenConfirm':
        if (m.type !== MsgType.Keepalive) throw new BgpProtocolError(ErrCode.Fsm, FsmSub.InOpenConfirm, Buffer.alloc(0), `message type ${m.type} in OpenConfirm`);
        this.state = 'Established';
        this.establishedAt = this.timers.now();
        this.armHold(this.hold);
        this.events.onEstablished?.();
        return;
      case 'Established':
        if (m.type === MsgType.Open) throw new BgpProtocolError(ErrCode.Fsm, FsmSub.InEstablished, Buffer.alloc(0), 'OPEN in Established');
        if (m.type === MsgType.Update) decodeUpdate(m.body, this.fourOctet);
        this.armHold(this.hold);
        return;
      default:
        return;
    }
  }

  private acceptOpen(o: OpenMessage): void {
    const as = peerAsOf(o);
    if (as !== this.cfg.remoteAsn) {
      const data = Buffer.alloc(2);
      data.writeUInt16BE(o.myAs);
      throw new BgpProtocolError(ErrCode.Open, OpenSub.BadPeerAs, data, `peer AS ${as}, configured ${this.cfg.remoteAsn}`);
    }
    // RFC 4271 §6.2: a hold time of one or two seconds must be rejected
    if (o.holdTime === 1 || o.holdTime === 2) throw new BgpProtocolError(ErrCode.Open, OpenSub.UnacceptableHoldTime, Buffer.alloc(0), `hold time ${o.holdTime}`);
    if (o.bgpId === this.cfg.routerId && this.cfg.remoteAsn === this.cfg.localAsn) throw new BgpProtocolError(ErrCode.Open, OpenSub.BadBgpId, Buffer.alloc(0), `BGP Identifier ${o.bgpId} is ours`);
    this.remote = o;
    this.fourOctet = o.fourOctetAs !== undefined;
    const t = negotiateTimers(this.cfg.holdTime, o.holdTime, this.cfg.keepAliveTime);
    this.hold = t.hold;
    this.keepAlive = t.keepAlive;
    this.state = 'OpenConfirm';
    this.events.onOpen?.(o);
    if (this.ended()) return; // collision resolution closed this one
    this.io.write(encodeKeepalive());
    this.armKeepAlive();
    this.armHold(this.hold);
  }

  private armHold(seconds: number): void {
    if (this.holdTimer !== undefined) this.timers.clear(this.holdTimer);
    this.holdTimer = seconds > 0 ? this.timers.set(() => this.fail(ErrCode.HoldTimerExpired, 0, Buffer.alloc(0), `no message for ${seconds} s`), seconds * 1000) : undefined;
  }

  private armKeepAlive(): void {
    if (this.keepAliveTimer !== undefined) this.timers.clear(this.keepAliveTimer);
    this.keepAliveTimer = this.keepAlive > 0 ? this.timers.set(() => {
      this.keepAliveTimer = undefined;
      if (this.state !== 'OpenConfirm' && this.state !== 'Established') return;
      this.io.write(encodeKeepalive());
      this.armKeepAlive();
    }, this.keepAlive * 1000) : undefined;
  }

  private fail(code: number, subcode: number, data: Buffer, detail: string): void {
    if (this.state === 'Idle') return;
    this.io.write(encodeNotification(code, subcode, data));
    this.end({ reason: `sent ${describeNotification(code, subcode)}${detail ? `: ${detail}` : ''}`, sent: { code, subcode } });
  }

  private end(e: SessionEnd): void {
    if (this.state === 'Idle') return;
    this.state = 'Idle';
    this.establishedAt = undefined;
    if (this.holdTimer !== undefined) this.timers.clear(this.holdTimer);
    if (this.keepAliveTimer !== undefined) this.timers.clear(this.keepAliveTimer);
    this.holdTimer = this.keepAliveTimer = undefined;
    this.io.end();
    this.events.onEnd?.(e);
  }
}
