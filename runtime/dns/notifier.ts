import { createSocket, type Socket } from 'node:dgram';
import { isIP } from 'node:net';
import type { Logger } from '../log/logger.js';
import type { DnsMetrics } from './metrics.js';
import { notifyAnswer, notifyMessage, randomId } from './notify-message.js';
import type { NotifyAddress } from '../net/notify-address.js';
import type { TsigKey } from './tsig.js';
import type { ZoneIndex } from './zone-index.js';

/** A configured secondary (`dns.axfr.notify[]`), its key looked up. */
export interface NotifyTarget extends NotifyAddress { address: string; key: TsigKey | undefined }

/** Tries of one NOTIFY before it is given up (RFC 1996 §3.6 leaves the count to the primary). */
export const NOTIFY_TRIES = 5;

/** One NOTIFY on its way to one target: the newest serial of one zone. */
interface Job { target: NotifyTarget; zone: string; serial: number; id: number; msg: Buffer; mac: Buffer | undefined; tries: number; timer: NodeJS.Timeout | undefined }

export interface NotifierDeps {
  targets: readonly NotifyTarget[];
  /** wait for the first answer (ms); each retry waits twice the one before */
  timeoutMs: number;
  /** dns.listenAddr: NOTIFYs leave from it when it is a specific address of the target's family (a secondary checks the source) */
  listenAddr: string;
  metrics: DnsMetrics;
  log: Logger;
  /** wall clock in ms, for TSIG times (default Date.now) */
  now?: () => number;
}

/**
 * Sends NOTIFY (RFC 1996) to the configured secondaries when a served zone's SOA serial changes
 * (docs/dns.md "Zone transfers"). Runs on the main thread's event loop, never on the answer path:
 * `indexInstalled` is called once per installed zone index and only compares serials. Coalesced:
 * one NOTIFY per target and zone is in flight, and a newer serial replaces a pending older one
 * (a fresh ID, its tries counted anew), so the work is bounded by targets × zones. Each is sent
 * over UDP and sent again after `timeoutMs`, 2×, 4× … until a response with its ID and opcode
 * NOTIFY (signed with the target's key when it has one) arrives, at most `NOTIFY_TRIES` times.
 * Counts `gslbd_dns_notify_total{result}`: answered (NOERROR), retried (each resend), failed
 * (unanswered after the last try, or answered with an error RCODE).
 */
export class Notifier {
  private readonly jobs = new Map<string, Job>();
  private readonly byId = new Map<number, Job>();
  private readonly sockets = new Map<4 | 6, Socket>();
  /** the serial each zone was last notified (or seen) at */
  private readonly known = new Map<string, number>();
  private closed = false;
  private readonly now: () => number;

  constructor(private readonly deps: NotifierDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Records the serials of `ix` without sending (the state at start: secondaries refresh on their own then). */
  seed(ix: ZoneIndex): void {
    for (const z of ix.zones.values()) this.known.set(z.name, ix.serial);
  }

  /** An index is installed: NOTIFY every target of each zone whose serial is new. */
  indexInstalled(ix: ZoneIndex): void {
    if (this.closed || this.deps.targets.length === 0) return;
    for (const z of ix.zones.values()) {
      if (this.known.get(z.name) === ix.serial) continue;
      this.known.set(z.name, ix.serial);
      for (const t of this.deps.targets) this.start(t, z.name, ix.serial, z.soa);
    }
  }

  /** Stops: pending NOTIFYs are dropped, the sockets closed. */
  close(): void {
    this.closed = true;
    for (const j of this.jobs.values()) clearTimeout(j.timer);
    this.jobs.clear();
    this.byId.clear();
    for (const s of this.sockets.values()) s.close();
    this.sockets.clear();
  }

  private start(target: NotifyTarget, zone: string, serial: number, soa: Buffer): void {
    const k = `${target.address} ${zone}`;
    const old = this.jobs.get(k);
    if (old) { clearTimeout(old.timer); this.byId.delete(old.id); }
    let id = randomId();
    while (this.byId.has(id)) id = randomId();
    const { msg, mac } = notifyMessage(id, zone, soa, target.key, Math.floor(this.now() / 1000));
    const job: Job = { target, zone, serial, id, msg, mac, tries: 0, timer: undefined };
    this.jobs.set(k, job);
    this.byId.set(id, job);
    this.send(job);
  }

  private send(job: Job): void {
    job.tries++;
    const t = job.target;
    this.socket(t.family).send(job.msg, t.port, t.host, (err) => {
      if (err) this.deps.log.debug({ err, target: t.address, zone: job.zone }, 'dns notify not sent');
    });
    job.timer = setTimeout(() => { this.timedOut(job); }, this.deps.timeoutMs * 2 ** (job.tries - 1));
    job.timer.unref();
  }

  private timedOut(job: Job): void {
    if (this.byId.get(job.id) !== job) return;
    if (job.tries < NOTIFY_TRIES) {
      this.deps.metrics.notify.retried++;
      this.send(job);
      return;
    }
    this.end(job);
    this.deps.metrics.notify.failed++;
    this.deps.log.warn({ target: job.target.address, zone: job.zone, serial: job.serial, tries: job.tries }, 'dns notify unanswered');
  }

  private end(job: Job): void {
    clearTimeout(job.timer);
    this.byId.delete(job.id);
    const k = `${job.target.address} ${job.zone}`;
    if (this.jobs.get(k) === job) this.jobs.delete(k);
  }

  private received(msg: Buffer, from: { address: string; port: number }): void {
    if (msg.length < 12) return;
    const job = this.byId.get(msg.readUInt16BE(0));
    if (!job || from.port !== job.target.port || !sameAddress(from.address, job.target.host)) return;
    const rcode = notifyAnswer(msg, job.target.key, job.mac, Math.floor(this.now() / 1000));
    if (rcode === undefined) return;
    this.end(job);
    const fields = { target: job.target.address, zone: job.zone, serial: job.serial, tries: job.tries, rcode, tsigKey: job.target.key?.name };
    if (rcode === 0) {
      this.deps.metrics.notify.answered++;
      this.deps.log.info(fields, 'dns notify answered');
    } else {
      this.deps.metrics.notify.failed++;
      this.deps.log.warn(fields, 'dns notify refused by the secondary');
    }
  }

  private socket(family: 4 | 6): Socket {
    let s = this.sockets.get(family);
    if (s) return s;
    s = createSocket(family === 4 ? 'udp4' : 'udp6');
    s.on('message', (m, r) => { this.received(m, r); });
    s.on('error', (err) => { this.deps.log.warn({ err }, 'dns notify socket error'); });
    const la = this.deps.listenAddr;
    s.bind(isIP(la) === family && la !== '0.0.0.0' && la !== '::' ? { port: 0, address: la } : { port: 0 });
    s.unref();
    this.sockets.set(family, s);
    return s;
  }
}

/** True when two textual IP addresses are the same (IPv4-mapped IPv6 and case aside). */
function sameAddress(a: string, b: string): boolean {
  const n = (x: string) => x.toLowerCase().replace(/^::ffff:(?=\d+\.)/, '');
  return n(a) === n(b);
}
