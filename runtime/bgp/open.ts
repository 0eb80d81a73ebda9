import { BgpProtocolError, ErrCode, OpenSub } from './errors.js';
import { frameMessage, MsgType } from './header.js';

/** AS_TRANS (RFC 6793 §9): the 2-byte stand-in for an ASN above 65535. */
export const AS_TRANS = 23456;

const PARAM_CAPABILITIES = 2;
const CAP_MULTIPROTOCOL = 1;
const CAP_FOUR_OCTET_AS = 65;

/** What an OPEN says (RFC 4271 §4.2 with RFC 5492 capabilities). */
export interface OpenMessage {
  version: number;
  /** the 2-byte "My Autonomous System" field (AS_TRANS when the real ASN needs 4 bytes) */
  myAs: number;
  holdTime: number;
  /** BGP Identifier as dotted quad */
  bgpId: string;
  /** the ASN of the 4-octet AS capability (RFC 6793), when advertised */
  fourOctetAs: number | undefined;
  /** address families of the multiprotocol capability (RFC 4760), as `afi/safi` */
  families: string[];
  /** capability codes seen, unknown ones included (they are ignored, RFC 5492 §3) */
  capabilityCodes: number[];
}

/** What we put in our OPEN. */
export interface OpenParams { asn: number; holdTime: number; routerId: string }

const ipToBuf = (ip: string) => Buffer.from(ip.split('.').map(Number));

/**
 * Our OPEN: version 4, the ASN (AS_TRANS when above 65535), hold time in seconds, router id, and
 * two capabilities: multiprotocol IPv4 unicast and 4-octet AS numbers with the real ASN.
 */
export function encodeOpen(p: OpenParams): Buffer {
  const mp = Buffer.from([CAP_MULTIPROTOCOL, 4, 0, 1, 0, 1]);
  const as4 = Buffer.alloc(6);
  as4.writeUInt8(CAP_FOUR_OCTET_AS, 0);
  as4.writeUInt8(4, 1);
  as4.writeUInt32BE(p.asn, 2);
  const caps = Buffer.concat([mp, as4]);
  const param = Buffer.concat([Buffer.from([PARAM_CAPABILITIES, caps.length]), caps]);
  const body = Buffer.alloc(10);
  body.writeUInt8(4, 0);
  body.writeUInt16BE(p.asn > 0xffff ? AS_TRANS : p.asn, 1);
  body.writeUInt16BE(p.holdTime, 3);
  ipToBuf(p.routerId).copy(body, 5);
  body.writeUInt8(param.length, 9);
  return frameMessage(MsgType.Open, Buffer.concat([body, param]));
}

const openError = (sub: number, detail: string, data: Buffer = Buffer.alloc(0)) => new BgpProtocolError(ErrCode.Open, sub, data, detail);

/**
 * Reads an OPEN body (RFC 4271 §6.2): version 4 (else Unsupported Version Number, data the
 * version we support), a non-zero BGP Identifier (else Bad BGP Identifier), optional parameters
 * that fit the stated length (else Unspecific) and are all capabilities (else Unsupported
 * Optional Parameter). Hold time and peer AS are checked by the session, which knows the config.
 */
export function decodeOpen(body: Buffer): OpenMessage {
  const version = body.readUInt8(0);
  if (version !== 4) throw openError(OpenSub.UnsupportedVersion, `version ${version}`, Buffer.from([0, 4]));
  const myAs = body.readUInt16BE(1);
  const holdTime = body.readUInt16BE(3);
  const id = body.subarray(5, 9);
  const bgpId = [...id].join('.');
  if (id.readUInt32BE(0) === 0) throw openError(OpenSub.BadBgpId, 'BGP Identifier 0.0.0.0');
  const optLen = body.readUInt8(9);
  if (10 + optLen !== body.length) throw openError(OpenSub.Unspecific, `optional parameters length ${optLen} does not match the message`);
  const out: OpenMessage = { version, myAs, holdTime, bgpId, fourOctetAs: undefined, families: [], capabilityCodes: [] };
  let i = 10;
  while (i < body.length) {
    if (i + 2 > body.length) throw openError(OpenSub.Unspecific, 'truncated optional parameter');
    const type = body.readUInt8(i);
    const len = body.readUInt8(i + 1);
    const end = i + 2 + len;
    if (end > body.length) throw openError(OpenSub.Unspecific, 'optional parameter runs past the message');
    if (type !== PARAM_CAPABILITIES) throw openError(OpenSub.UnsupportedOptionalParameter, `optional parameter type ${type}`);
    readCapabilities(body.subarray(i + 2, end), out);
    i = end;
  }
  return out;
}

function readCapabilities(buf: Buffer, out: OpenMessage): void {
  let i = 0;
  while (i < buf.length) {
    if (i + 2 > buf.length) throw openError(OpenSub.Unspecific, 'truncated capability');
    const code = buf.readUInt8(i);
    const len = buf.readUInt8(i + 1);
    const v = buf.subarray(i + 2, i + 2 + len);
    if (v.length !== len) throw openError(OpenSub.Unspecific, `capability ${code} runs past its parameter`);
    out.capabilityCodes.push(code);
    if (code === CAP_FOUR_OCTET_AS) {
      if (len !== 4) throw openError(OpenSub.Unspecific, `4-octet AS capability of length ${len}`);
      out.fourOctetAs = v.readUInt32BE(0);
    } else if (code === CAP_MULTIPROTOCOL) {
      if (len !== 4) throw openError(OpenSub.Unspecific, `multiprotocol capability of length ${len}`);
      out.families.push(`${v.readUInt16BE(0)}/${v.readUInt8(3)}`);
    }
    i += 2 + len;
  }
}

/** The peer's ASN: the 4-octet capability's when present (RFC 6793 §4.1), else the 2-byte field. */
export const peerAsOf = (o: OpenMessage): number => o.fourOctetAs ?? o.myAs;
