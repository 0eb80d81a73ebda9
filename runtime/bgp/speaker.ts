import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from '../log/logger.js';
import type { Timers } from '../timers.js';
import { BgpPeer, LINGER_MS, plainAddress, type PeerConfig } from './peer.js';
import { CeaseSub, ErrCode } from './errors.js';
import { encodeNotification } from './header.js';
import { parsePrefix4, type Prefix4 } from './prefix.js';
import { encodeUpdates, type OutAttributes } from './update.js';
import type { Session, SessionEnd, SessionState } from './session.js';
import type { BgpMetrics } from './metrics.js';

/** The speaker's settings, times in whole seconds (runtime/bgp/settings.ts derives them from the config). */
export interface SpeakerConfig {
  localAsn: number;
  routerId: string;
  holdTime: number;
  keepAliveTime: number;
  listenAddr: string;
  listenPort: number;
  peers: { remoteAsn: number; remoteAddr: string; remotePort: number }[];
}

/** One peer as GET /api/v1/bgp shows it. */
export interface PeerStatus {
  remoteAddr: string;
  remotePort: number;
  remoteASN: number;
  type: 'ebgp' | 'ibgp';
  state: SessionState;
  stateSince: number;
  uptimeSeconds: number;
  remoteRouterID: string | null;
  holdTime: number | null;
  keepAliveTime: number | null;
  fourOctetAs: boolean;
  lastError: string | null;
  lastErrorAt: number | null;
  prefixesAnnounced: string[];
  updatesSent: number;
}

/** LOCAL_PREF we send to iBGP peers (the common default). */
export const IBGP_LOCAL_PREF = 100;

/**
 * The BGP speaker: one BgpPeer per configured neighbour, a passive listener that hands each
 * accepted connection to the peer of its source address (others get Cease / Connection Rejected),
 * and per peer the set of prefixes it holds from us (Adj-RIB-Out). `announce(prefixes)` sends each
 * established peer only the difference; a newly established session gets the whole set. `stop`
 * withdraws everything, then ends every session with Cease / Administrative Shutdown.
 * Every accepted connection is tracked until it closes: a refused one is destroyed `LINGER_MS`
 * after its NOTIFICATION, and `stop` destroys whatever is left, so a remote end that never closes
 * its side cannot keep the listener (and shutdown) open.
 */
export class BgpSpeaker {
  readonly peers = new Map<string, BgpPeer>();
  private readonly sent = new Map<BgpPeer, Set<string>>();
  private readonly updates = new Map<BgpPeer, number>();
  private desired: string[] = [];
  private stopping = false;
  private server: Server | undefined;
  private readonly accepted = new Set<Socket>();
  boundPort: number | undefined;

  constructor(readonly cfg: SpeakerConfig, private readonly timers: Timers, private readonly log: Logger, private readonly metrics?: BgpMetrics) {
    const localAddr = cfg.listenAddr === '0.0.0.0' || cfg.listenAddr === '::' ? undefined : cfg.listenAddr;
    for (const p of cfg.peers) {
      const pc: PeerConfig = {
        localAsn: cfg.localAsn, routerId: cfg.routerId, holdTime: cfg.holdTime, keepAliveTime: cfg.keepAliveTime,
        remoteAsn: p.remoteAsn, remoteAddr: p.remoteAddr, remotePort: p.remotePort, localAddr,
      };
      this.peers.set(p.remoteAddr, new BgpPeer(pc, timers, {
        onEstablished: (peer, session, socket) => this.established(peer, session, socket),
        onEnd: (peer, end, wasEstablished) => this.ended(peer, end, wasEstablished),
      }));
    }
  }

  /** Listens on listenAddr:listenPort (0: any free port, for tests). Resolves with the bound port. */
  async listen(): Promise<number> {
    const server = createServer((socket) => {
      this.accepted.add(socket);
      socket.once('close', () => this.accepted.delete(socket));
      this.incoming(socket);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: this.cfg.listenAddr, port: this.cfg.listenPort }, () => { server.off('error', reject); resolve(); });
    });
    server.on('error', (err) => this.log.error({ err }, 'bgp listener failed'));
    this.server = server;
    this.boundPort = (server.address() as { port: number }).port;
    return this.boundPort;
  }

  /** Starts connecting to every peer. */
  start(): void {
    for (const p of this.peers.values()) p.start();
  }

  /** Sets what we announce and sends each established peer the difference. */
  announce(prefixes: readonly string[]): void {
    if (this.stopping) return; // an evaluation queued before shutdown must not announce again
    this.desired = [...prefixes];
    for (const p of this.peers.values()) this.sync(p);
  }

  /** What we announce now. */
  announced(): readonly string[] {
    return this.desired;
  }

  /**
   * Withdraws every prefix from every established peer, ends the sessions with Cease /
   * Administrative Shutdown and closes the listener, within about `timeoutMs`.
   */
  async stop(timeoutMs: number): Promise<void> {
    this.stopping = true;
    this.desired = [];
    for (const p of this.peers.values()) this.sync(p);
    // server.close() calls back only once every accepted connection has closed
    const closed = this.server ? new Promise<void>((r) => this.server!.close(() => r())) : Promise.resolve();
    await Promise.all([...this.peers.values()].map((p) => p.stop(timeoutMs)));
    for (const s of this.accepted) s.destroy();
    await closed;
  }

  /** Every peer as the status route shows it. */
  status(): PeerStatus[] {
    const now = this.timers.now();
    return [...this.peers.values()].map((p) => {
      const est = p.established();
      const s = est?.session;
      return {
        remoteAddr: p.cfg.remoteAddr, remotePort: p.cfg.remotePort, remoteASN: p.cfg.remoteAsn,
        type: p.cfg.remoteAsn === p.cfg.localAsn ? 'ibgp' : 'ebgp',
        state: p.state(), stateSince: p.stateSince,
        uptimeSeconds: s?.establishedAt !== undefined ? Math.floor((now - s.establishedAt) / 1000) : 0,
        remoteRouterID: s?.remote?.bgpId ?? null, holdTime: s ? s.hold : null, keepAliveTime: s ? s.keepAlive : null,
        fourOctetAs: s?.fourOctet ?? false,
        lastError: p.lastError ?? null, lastErrorAt: p.lastErrorAt ?? null,
        prefixesAnnounced: [...(this.sent.get(p) ?? [])].sort(),
        updatesSent: this.updates.get(p) ?? 0,
      };
    });
  }

  private incoming(socket: Socket): void {
    const addr = plainAddress(socket.remoteAddress);
    const peer = this.peers.get(addr);
    if (!peer) {
      this.log.warn({ remoteAddr: addr }, 'bgp connection from an address that is not a configured peer refused');
      socket.on('error', () => {});
      socket.end(encodeNotification(ErrCode.Cease, CeaseSub.ConnectionRejected));
      // end() waits for the other side's FIN, which it may never send
      this.timers.set(() => socket.destroy(), LINGER_MS);
      return;
    }
    peer.accept(socket);
  }

  private established(peer: BgpPeer, session: Session, socket: Socket): void {
    this.log.info({ peer: peer.cfg.remoteAddr, remoteRouterID: session.remote?.bgpId, hold: session.hold, fourOctetAs: session.fourOctet }, 'bgp session established');
    this.metrics?.establishedTransitions.inc({ peer: peer.cfg.remoteAddr });
    this.sent.set(peer, new Set());
    this.sync(peer, socket);
  }

  private ended(peer: BgpPeer, end: SessionEnd, wasEstablished: boolean): void {
    const label = peer.cfg.remoteAddr;
    if (end.sent) this.metrics?.notificationsSent.inc({ peer: label, code: `${end.sent.code}/${end.sent.subcode}` });
    if (end.received) this.metrics?.notificationsReceived.inc({ peer: label, code: `${end.received.code}/${end.received.subcode}` });
    if (!wasEstablished) {
      this.log.debug({ peer: label, reason: end.reason }, 'bgp session attempt ended');
      return;
    }
    this.sent.delete(peer);
    // our own Cease (shutdown, collision) is expected; anything else is worth a warning
    if (end.sent?.code === ErrCode.Cease) this.log.info({ peer: label, reason: end.reason }, 'bgp session closed');
    else this.log.warn({ peer: label, reason: end.reason }, 'bgp session down');
  }

  /** Sends `peer` the difference between what it holds and what we announce. */
  private sync(peer: BgpPeer, socket?: Socket): void {
    const est = peer.established();
    const held = this.sent.get(peer);
    if (!est || !held) return;
    const want = new Set(this.desired);
    const withdraw = [...held].filter((p) => !want.has(p));
    const add = this.desired.filter((p) => !held.has(p));
    if (!withdraw.length && !add.length) return;
    const ibgp = peer.cfg.remoteAsn === peer.cfg.localAsn;
    const attrs: OutAttributes = {
      asPath: ibgp ? [] : [peer.cfg.localAsn],
      // NEXT_HOP is our address on this session (RFC 4271 §5.1.3)
      nextHop: plainAddress((socket ?? est.socket).localAddress),
      localPref: ibgp ? IBGP_LOCAL_PREF : undefined,
    };
    const msgs = encodeUpdates(toPrefixes(withdraw), toPrefixes(add), attrs, est.session.fourOctet);
    est.session.sendMessages(msgs);
    for (const p of withdraw) held.delete(p);
    for (const p of add) held.add(p);
    this.updates.set(peer, (this.updates.get(peer) ?? 0) + msgs.length);
    this.metrics?.updatesSent.inc({ peer: peer.cfg.remoteAddr }, msgs.length);
    this.log.info({ peer: peer.cfg.remoteAddr, announced: add, withdrawn: withdraw }, 'bgp update sent');
  }
}

const toPrefixes = (list: string[]): Prefix4[] => list.map((p) => parsePrefix4(p)).filter((p): p is Prefix4 => p !== undefined);
