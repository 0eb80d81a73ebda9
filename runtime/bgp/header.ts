import { BgpProtocolError, ErrCode, HeaderSub } from './errors.js';

/** Message types (RFC 4271 §4.1). ROUTE-REFRESH (5) is not advertised, so it is a bad type here. */
export const MsgType = { Open: 1, Update: 2, Notification: 3, Keepalive: 4 } as const;
export type MsgTypeValue = (typeof MsgType)[keyof typeof MsgType];

export const HEADER_LEN = 19;
/** Largest message (RFC 4271 §4.1; extended messages, RFC 8654, are not advertised). */
export const MAX_MESSAGE_LEN = 4096;

/** Smallest legal length per type (RFC 4271 §4.2–4.5). */
const MIN_LEN: Record<number, number> = { 1: 29, 2: 23, 3: 21, 4: 19 };

/** A whole message read off the wire: its type and body (the bytes after the header). */
export interface RawMessage { type: MsgTypeValue; body: Buffer }

/** Prefixes `body` with the 19-byte header (all-ones marker, length, type). */
export function frameMessage(type: MsgTypeValue, body: Buffer = Buffer.alloc(0)): Buffer {
  const out = Buffer.alloc(HEADER_LEN + body.length, 0xff);
  out.writeUInt16BE(HEADER_LEN + body.length, 16);
  out.writeUInt8(type, 18);
  body.copy(out, HEADER_LEN);
  return out;
}

/** A KEEPALIVE: the header alone (RFC 4271 §4.4). */
export const encodeKeepalive = (): Buffer => frameMessage(MsgType.Keepalive);

/** A NOTIFICATION (RFC 4271 §4.5). */
export function encodeNotification(code: number, subcode: number, data: Buffer = Buffer.alloc(0)): Buffer {
  const body = Buffer.alloc(2 + data.length);
  body.writeUInt8(code, 0);
  body.writeUInt8(subcode, 1);
  data.copy(body, 2);
  return frameMessage(MsgType.Notification, body);
}

/** A decoded NOTIFICATION. */
export interface Notification { code: number; subcode: number; data: Buffer }

/** Reads a NOTIFICATION body (its length was checked with the header). */
export function decodeNotification(body: Buffer): Notification {
  return { code: body.readUInt8(0), subcode: body.readUInt8(1), data: Buffer.from(body.subarray(2)) };
}

const u16 = (n: number) => { const b = Buffer.alloc(2); b.writeUInt16BE(n); return b; };

/**
 * Checks a header (RFC 4271 §6.1): the marker is all ones (else Connection Not Synchronized), the
 * length is within 19..4096 and at least the type's minimum (KEEPALIVE exactly 19; else Bad
 * Message Length, the length as data), the type is 1..4 (else Bad Message Type, the type as data).
 * Returns the message length.
 */
export function checkHeader(head: Buffer): { type: MsgTypeValue; length: number } {
  for (let i = 0; i < 16; i++) if (head[i] !== 0xff) throw new BgpProtocolError(ErrCode.MessageHeader, HeaderSub.NotSynchronized, Buffer.alloc(0), 'marker is not all ones');
  const length = head.readUInt16BE(16);
  const type = head.readUInt8(18);
  if (length < HEADER_LEN || length > MAX_MESSAGE_LEN) throw new BgpProtocolError(ErrCode.MessageHeader, HeaderSub.BadLength, u16(length), `length ${length}`);
  const min = MIN_LEN[type];
  if (min === undefined) throw new BgpProtocolError(ErrCode.MessageHeader, HeaderSub.BadType, Buffer.from([type]), `type ${type}`);
  if (length < min || (type === MsgType.Keepalive && length !== HEADER_LEN)) throw new BgpProtocolError(ErrCode.MessageHeader, HeaderSub.BadLength, u16(length), `length ${length} for type ${type}`);
  return { type: type as MsgTypeValue, length };
}

/**
 * Splits a TCP byte stream into messages. `push` returns the whole messages received so far and
 * keeps the rest; a bad header throws BgpProtocolError (the stream cannot be resynchronised, so
 * the session closes).
 */
export class FrameReader {
  private buf: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): RawMessage[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const out: RawMessage[] = [];
    while (this.buf.length >= HEADER_LEN) {
      const { type, length } = checkHeader(this.buf);
      if (this.buf.length < length) break;
      out.push({ type, body: Buffer.from(this.buf.subarray(HEADER_LEN, length)) });
      this.buf = this.buf.subarray(length);
    }
    return out;
  }
}
