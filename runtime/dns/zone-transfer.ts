import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Config } from '../config/types.js';
import type { Logger } from '../log/logger.js';
import type { DnsMetrics } from './metrics.js';
import type { TransferHandler } from './step-transfer.js';
import { TsigStreamSigner, appendTsig, verifyRequest, type TsigKeyring } from './tsig.js';
import { DecodeStatus, ParsedQuery, decodeQuery } from './wire-query.js';
import { TYPE, nameToWire } from './wire-reply.js';
import type { Zone, ZoneIndex } from './zone-index.js';
import { ixfrCurrent, ixfrRecords } from './ixfr-answer.js';
import type { IxfrJournal } from './ixfr-journal.js';
import { ixfrClientSerial } from './ixfr-request.js';
import { SYSTEM_SCOPE, zoneRecords, type TransferScope, type ZoneRecord } from './zone-records.js';

/**
 * Largest transfer message before its TSIG: under 64 KiB with room for an OPT and the largest TSIG
 * RR (a 255-octet key name and a 64-octet MAC).
 */
export const MAX_TRANSFER_MESSAGE = 65535 - 1024;

/** Compression pointers reach only the first 16 KiB of a message (RFC 1035 §4.1.4: 14 bits). */
const POINTER_LIMIT = 0x3fff;

/** Scratch for one message; messages are encoded synchronously, one at a time, then copied out. */
const scratch = Buffer.allocUnsafe(65535);

/**
 * Encodes the messages of one transfer: the first echoes the question, every one holds as many
 * records as fit under `MAX_TRANSFER_MESSAGE`. Owner names are the relative labels plus a
 * pointer to the apex (the question name, or the first owner written in full in a later message),
 * or a pointer to the previous owner when it is the same name. With `edns`, each message ends
 * with an OPT record (RFC 6891 §7) advertising `payloadSize`.
 */
export class TransferEncoder {
  private i = 0;
  private first = true;
  private readonly apexWire: Buffer;

  constructor(
    private readonly req: Buffer,
    private readonly q: ParsedQuery,
    apex: string,
    private readonly records: readonly ZoneRecord[],
    private readonly payloadSize: number,
  ) {
    this.apexWire = nameToWire(apex);
  }

  /** True once every record is in a message. */
  get done(): boolean {
    return this.i >= this.records.length;
  }

  /** The next message (a fresh Buffer). */
  next(): Buffer {
    const b = scratch;
    const q = this.q;
    const recs = this.records;
    const limit = MAX_TRANSFER_MESSAGE - (q.edns ? 11 : 0);
    b.writeUInt16BE(q.id, 0);
    b.writeUInt16BE(0x8400 | (q.flags & 0x0100), 2); // QR, AA, RD copied; opcode QUERY, NOERROR
    let pos = 12;
    let apexAt = -1;
    if (this.first) {
      pos += this.req.copy(b, 12, 12, q.questionEnd);
      apexAt = 12;
    }
    let an = 0;
    let ownerAt = -1;
    let prevRel: Buffer | undefined;
    while (this.i < recs.length) {
      const r = recs[this.i]!;
      const samePrev = r.rel === prevRel && ownerAt >= 0 && ownerAt <= POINTER_LIMIT;
      const nameLen = samePrev ? 2 : r.rel.length + (apexAt >= 0 ? 2 : this.apexWire.length);
      if (pos + nameLen + 10 + r.rdata.length > limit) {
        if (an > 0) break;
        this.i++; // a record larger than any message (zone-records.ts keeps TXT data below this)
        continue;
      }
      if (samePrev) {
        b[pos] = 0xc0 | (ownerAt >> 8); b[pos + 1] = ownerAt & 0xff;
        pos += 2;
      } else {
        ownerAt = pos;
        pos += r.rel.copy(b, pos);
        if (apexAt >= 0) { b[pos] = 0xc0 | (apexAt >> 8); b[pos + 1] = apexAt & 0xff; pos += 2; }
        else { apexAt = pos; pos += this.apexWire.copy(b, pos); }
      }
      prevRel = r.rel;
      b.writeUInt16BE(r.type, pos);
      b.writeUInt16BE(1, pos + 2);
      b.writeUInt32BE(r.ttl >>> 0, pos + 4);
      b.writeUInt16BE(r.rdata.length, pos + 8);
      pos += 10;
      pos += r.rdata.copy(b, pos);
      an++;
      this.i++;
    }
    let ar = 0;
    if (q.edns) {
      b[pos] = 0;
      b.writeUInt16BE(41, pos + 1);
      b.writeUInt16BE(this.payloadSize, pos + 3);
      b.writeUInt32BE(q.dnssecOk ? 0x8000 : 0, pos + 5);
      b.writeUInt16BE(0, pos + 9);
      pos += 11;
      ar = 1;
    }
    b.writeUInt16BE(this.first ? 1 : 0, 4);
    b.writeUInt16BE(an, 6);
    b.writeUInt16BE(0, 8);
    b.writeUInt16BE(ar, 10);
    this.first = false;
    return Buffer.from(b.subarray(0, pos));
  }
}

/** What the transfer handler reads. */
export interface TransferDeps {
  config: Config;
  /** the current zone index (Answerer.index) */
  index: () => ZoneIndex;
  keys: TsigKeyring;
  /** whom each key transfers for (transfer-scope.ts); a signed request with a key not in it is declined */
  scopes: ReadonlyMap<string, TransferScope>;
  metrics: DnsMetrics;
  log: Logger;
  /** how long the client may leave a backlog of messages unread before the transfer is abandoned (ms) */
  writeTimeoutMs: number;
  /** wall clock in ms, for TSIG times (default Date.now) */
  now?: () => number;
  /** the IXFR journal (ixfr-journal.ts); without it every IXFR gets the whole zone */
  journal?: Pick<IxfrJournal, 'changes'> | undefined;
}

/**
 * What an IXFR for `zone` from the client's serial gets (docs/dns.md "Incremental transfers"): the
 * single SOA when the client is current, the condensed difference when the journal reaches back
 * to its serial, else undefined (the whole zone, AXFR-style). `from` is undefined for a request
 * without a readable SOA.
 */
function incremental(deps: TransferDeps, zone: Zone, serial: number, from: number | undefined, scope: TransferScope): { records: ZoneRecord[]; kind: string } | undefined {
  if (from === undefined) return undefined;
  if (from === serial) return { records: ixfrCurrent(zone), kind: 'current' };
  const diff = deps.journal?.changes(zone.name, from, serial, scope === SYSTEM_SCOPE ? undefined : scope);
  return diff && { records: ixfrRecords(zone, from, diff), kind: 'incremental' };
}

/**
 * The AXFR/IXFR handler (docs/dns.md "Zone transfers"; RFC 5936, RFC 1995 §4). It answers only a
 * well-formed request for the apex of a served zone, with `dns.axfr.enabled`, and with a TSIG that
 * verifies (required when `dns.axfr.requireTsig`); everything else is declined, and the answer
 * path replies REFUSED or with the TSIG error. A signed request gets the records of its key's scope
 * (a tenant's names, or the whole zone for the operator's key; a key with no scope is declined),
 * an unsigned one (allowed without `requireTsig`) the whole zone. An IXFR gets the single SOA
 * when the client is current, the condensed difference from its serial when the journal has it
 * (RFC 1995 §4, §5; a tenant's key: that tenant's records of it), else the same as an AXFR.
 * The records are those of `zoneRecords` at the serial current when the request arrived; messages are sent one
 * at a time, each signed when the request was (RFC 8945 §5.3.1), with a turn of the event loop
 * between them and a wait whenever the connection's backlog is large, so UDP answers keep flowing
 * and a client that stops reading is cut off after `writeTimeoutMs`. One log line per transfer
 * (never a key or a MAC).
 */
export function createTransferHandler(deps: TransferDeps): TransferHandler {
  const axfr = deps.config.dns.axfr;
  const now = deps.now ?? Date.now;
  const payloadSize = deps.config.dns.udpPayloadSize;
  return async (req, src, out) => {
    const q = new ParsedQuery();
    if (!axfr.enabled || decodeQuery(req, q) !== DecodeStatus.Ok || q.qclass !== 1) return false;
    let signer: TsigStreamSigner | undefined;
    let keyName: string | undefined;
    let scope: TransferScope = SYSTEM_SCOPE;
    if (q.tsigAt >= 0) {
      const v = verifyRequest(req, q.tsigAt, deps.keys, Math.floor(now() / 1000));
      if (!v.ok) return false;
      const s = deps.scopes.get(v.key.name);
      if (s === undefined) return false;
      scope = s;
      signer = new TsigStreamSigner(v);
      keyName = v.key.name;
    } else if (axfr.requireTsig) {
      return false;
    }
    const ix = deps.index();
    const zone = ix.zones.get(q.name);
    if (!zone) return false;
    const t0 = performance.now();
    const from = q.qtype === TYPE.IXFR ? ixfrClientSerial(req, q) : undefined;
    // the catalog zone's records come from the set of zones, not from rows: the journal holds no
    // difference of it, so an IXFR of it gets the whole zone (or the single SOA when current)
    const inc = q.qtype !== TYPE.IXFR ? undefined
      : ix.catalog?.zone === zone ? (from === ix.serial ? { records: ixfrCurrent(zone), kind: 'current' } : undefined)
        : incremental(deps, zone, ix.serial, from, scope);
    const records = inc?.records ?? await zoneRecords(ix, zone, deps.config, scope);
    const enc = new TransferEncoder(req, q, zone.name, records, payloadSize);
    let messages = 0;
    while (!enc.done) {
      let msg = enc.next();
      if (signer) msg = appendTsig(msg, signer.sign(msg, Math.floor(now() / 1000)));
      out.send(msg);
      messages++;
      if (!(await out.drained(deps.writeTimeoutMs))) {
        deps.metrics.transfers.failed++;
        deps.log.info({ zone: zone.name, src, serial: ix.serial, messages, tsigKey: keyName }, 'dns zone transfer abandoned: connection closed or not read');
        return true;
      }
      await nextTurn();
    }
    deps.metrics.transfers.ok++;
    deps.log.info({
      zone: zone.name, src, type: q.qtype === TYPE.IXFR ? 'IXFR' : 'AXFR', ...(q.qtype === TYPE.IXFR ? { from, answer: inc?.kind ?? 'whole zone' } : {}),
      scope, serial: ix.serial, records: records.length, messages,
      ms: Math.round(performance.now() - t0), tsigKey: keyName,
    }, 'dns zone transfer');
    return true;
  };
}
