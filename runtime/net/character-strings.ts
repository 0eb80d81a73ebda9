import { isUtf8 } from 'node:buffer';

// TXT RDATA as RFC 1035 character-strings: a wire codec shared by the DNS answer path, the TXT
// records feature and the kernel's provenance (its CHAOS TXT form is built at apply time).

/**
 * The RDATA of one TXT record holding `value` (RFC 1035 §3.3.14): its UTF-8 bytes as
 * length-prefixed character-strings of at most 255 bytes; the empty value is one empty string.
 */
export function txtRdata(value: string): Buffer {
  const bytes = Buffer.from(value, 'utf8');
  const parts = Math.max(1, Math.ceil(bytes.length / 255));
  const out = Buffer.alloc(bytes.length + parts);
  for (let i = 0, at = 0; i < parts; i++) {
    const chunk = bytes.subarray(i * 255, i * 255 + 255);
    out[at] = chunk.length;
    chunk.copy(out, at + 1);
    at += chunk.length + 1;
  }
  return out;
}

/**
 * The value a TXT RDATA holds: its character-strings concatenated (the inverse of
 * {@link txtRdata}), or why it holds none: `malformed` when a character-string overruns the data,
 * `not-utf8` when the bytes are not UTF-8. Values are text, stored as JSON strings (rows, the
 * config stream, the REST API), so other bytes cannot be kept as sent: rather than store U+FFFD in
 * their place, the caller refuses them (docs/dns.md "Dynamic updates").
 */
export function txtValueOf(rdata: Uint8Array): { value: string } | { problem: 'malformed' | 'not-utf8' } {
  const parts: Uint8Array[] = [];
  for (let at = 0; at < rdata.length; ) {
    const n = rdata[at]!;
    if (at + 1 + n > rdata.length) return { problem: 'malformed' };
    parts.push(rdata.subarray(at + 1, at + 1 + n));
    at += n + 1;
  }
  const bytes = Buffer.concat(parts);
  return isUtf8(bytes) ? { value: bytes.toString('utf8') } : { problem: 'not-utf8' };
}
