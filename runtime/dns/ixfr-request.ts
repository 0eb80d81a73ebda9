import { TYPE } from './wire-reply.js';
import { skipName, skipRecord, type ParsedQuery } from './wire-query.js';

/**
 * The serial an IXFR request says the client has (RFC 1995 §3: the SOA record in its authority
 * section), or undefined when there is none to read (no authority record, not an SOA, or a record
 * cut short): such a request is answered with the whole zone.
 */
export function ixfrClientSerial(req: Buffer, q: ParsedQuery): number | undefined {
  let off = q.questionEnd;
  const an = req.readUInt16BE(6);
  if (req.readUInt16BE(8) < 1) return undefined;
  for (let i = 0; i < an && off >= 0; i++) off = skipRecord(req, off);
  if (off < 0) return undefined;
  const nameEnd = skipName(req, off);
  if (nameEnd < 0 || nameEnd + 10 > req.length || req.readUInt16BE(nameEnd) !== TYPE.SOA) return undefined;
  const end = nameEnd + 10 + req.readUInt16BE(nameEnd + 8);
  const mnameEnd = skipName(req, nameEnd + 10);
  const rnameEnd = mnameEnd < 0 ? -1 : skipName(req, mnameEnd);
  if (rnameEnd < 0 || rnameEnd + 20 > end || end > req.length) return undefined;
  return req.readUInt32BE(rnameEnd);
}
