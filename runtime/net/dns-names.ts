// Domain names in DNS wire form: shared by the DNS answer path and DNSSEC key files (key tags
// and DS digests are computed over the owner name's wire form).

/** Encodes a name (`www.example.test.`) in uncompressed wire form. */
export function nameToWire(name: string): Buffer {
  const parts = name.replace(/\.$/, '').split('.').filter((l) => l.length > 0);
  const out = Buffer.alloc(parts.reduce((n, l) => n + l.length + 1, 1));
  let o = 0;
  for (const l of parts) { out[o++] = l.length; o += out.write(l, o, 'latin1'); }
  out[o] = 0;
  return out;
}

/** `name` lower-cased with exactly one trailing dot. */
export function toFqdn(name: string): string {
  const n = name.toLowerCase();
  return n.endsWith('.') ? n : `${n}.`;
}
