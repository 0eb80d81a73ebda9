import fc from 'fast-check';

/** An OpenAPI 3.0 schema object, as far as the generator reads it. */
export interface Schema {
  $ref?: string;
  type?: string;
  nullable?: boolean;
  enum?: unknown[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  minProperties?: number;
  maxProperties?: number;
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
}

/** Resolves a `#/components/schemas/<name>` reference of the document. */
export type Resolve = (ref: string) => Schema;

/**
 * Values the daemon may act on reach nothing but this machine's loopback (the fuzz also runs in a
 * network namespace of its own): addresses are 127.0.0.0/8 or ::1, URLs name 127.0.0.1.
 */
const loopbackIp = fc.oneof(
  fc.tuple(fc.nat(255), fc.nat(255), fc.integer({ min: 1, max: 254 })).map(([a, b, c]) => `127.${a}.${b}.${c}`),
  fc.constant('::1'),
);
const pathPart = fc.string({ unit: fc.constantFrom(...'abcxyz019-_/'), maxLength: 12 });
const loopbackUrl = fc.tuple(fc.constantFrom('http', 'https'), fc.integer({ min: 1, max: 65535 }), pathPart)
  .map(([scheme, port, path]) => `${scheme}://127.0.0.1:${port}/${path}`);
const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?$/);
const hostName = fc.tuple(fc.array(label, { minLength: 1, maxLength: 3 }), fc.stringMatching(/^[a-z]{2,6}$/)).map(([ls, tld]) => [...ls, tld].join('.'));

/** Generators of the formats the document uses; each value is then checked against the schema's own pattern and bounds. */
const FORMATS: Record<string, fc.Arbitrary<string>> = {
  ip: loopbackIp,
  ipv4: loopbackIp.filter((s) => !s.includes(':')),
  cidr: fc.oneof(
    fc.tuple(fc.ipV4(), fc.nat(32)).map(([a, b]) => `${a}/${b}`),
    fc.tuple(fc.ipV6(), fc.nat(128)).map(([a, b]) => `${a}/${b}`),
  ),
  domain: fc.oneof(hostName, hostName.map((h) => `${h}.`)),
  fqdn: hostName.map((h) => `${h}.`),
  'redirect-host': fc.oneof(hostName, hostName.map((h) => `*.${h}`)),
  'http-url': loopbackUrl,
  uri: loopbackUrl,
  email: fc.tuple(label, hostName).map(([l, h]) => `${l}@${h}`),
  'date-time': fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()),
  printable: fc.string({ unit: 'grapheme', maxLength: 24 }),
  binary: fc.string({ maxLength: 64 }),
};

/** Property names a generated object may use: short, and never one JSON parsers treat as special. */
const propertyName = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz_0123456789'), minLength: 1, maxLength: 12 })
  .filter((k) => !['__proto__', 'constructor', 'prototype'].includes(k));

const countOf = (min: number | undefined, max: number | undefined, cap: number) => ({ minLength: min ?? 0, maxLength: Math.max(min ?? 0, Math.min(max ?? cap, (min ?? 0) + cap)) });

function stringArb(s: Schema): fc.Arbitrary<string> {
  const re = s.pattern === undefined ? undefined : new RegExp(s.pattern, 'u');
  const bounds = countOf(s.minLength, s.maxLength, 24);
  let base: fc.Arbitrary<string>;
  if (s.format !== undefined && FORMATS[s.format]) base = FORMATS[s.format]!;
  else if (re) {
    // fast-check builds strings from a pattern without lookarounds; with them, digits and text filtered by it
    try {
      base = fc.stringMatching(re);
    } catch {
      base = fc.oneof(fc.nat(1000).map(String), fc.string({ maxLength: bounds.maxLength }));
    }
  } else {
    base = fc.oneof(
      { weight: 4, arbitrary: fc.string({ unit: 'grapheme-ascii', ...bounds }) },
      { weight: 1, arbitrary: fc.string({ unit: 'grapheme', ...bounds }) },
    );
  }
  const len = (v: string) => [...v].length;
  return base.filter((v) => (re === undefined || re.test(v)) && len(v) >= (s.minLength ?? 0) && len(v) <= (s.maxLength ?? Infinity));
}

function numberArb(s: Schema, integer: boolean): fc.Arbitrary<number> {
  const min = s.minimum ?? (integer ? -1000 : -1e6);
  const max = s.maximum ?? (integer ? 100000 : 1e6);
  if (integer) return fc.oneof(fc.integer({ min, max }), fc.constantFrom(...new Set([min, max, Math.max(min, Math.min(max, 0))])));
  return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
}

/** Merges `allOf` members into one schema (the document's are one reference plus bounds). */
function mergeAll(s: Schema, resolve: Resolve): Schema {
  const parts = [...(s.allOf ?? []).map((p) => deref(p, resolve)), { ...s, allOf: undefined }];
  const out: Schema = {};
  for (const p of parts) {
    const merged = p.allOf ? mergeAll(p, resolve) : p;
    for (const [k, v] of Object.entries(merged)) {
      if (v === undefined) continue;
      if (k === 'properties') out.properties = { ...out.properties, ...(v as Record<string, Schema>) };
      else if (k === 'required') out.required = [...(out.required ?? []), ...(v as string[])];
      else (out as Record<string, unknown>)[k] = v;
    }
  }
  return out;
}

function deref(s: Schema, resolve: Resolve): Schema {
  let cur = s;
  for (let i = 0; cur.$ref !== undefined && i < 20; i++) cur = resolve(cur.$ref);
  return cur;
}

/**
 * A fast-check arbitrary of values valid for an OpenAPI 3.0 schema (the keywords the gslbd document
 * uses: type, nullable, enum, format, pattern, lengths, bounds, items, properties, required,
 * additionalProperties, property counts, allOf, anyOf, oneOf, $ref). The values aim to be valid;
 * the fuzz checks each one with ajv and drops the few that are not (a oneOf matched twice).
 * `depth` bounds recursive schemas.
 */
export function arbitraryFor(schema: Schema, resolve: Resolve, depth = 0): fc.Arbitrary<unknown> {
  let s = deref(schema, resolve);
  if (s.allOf) s = mergeAll(s, resolve);
  const nullable = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | null> => (s.nullable ? fc.oneof({ weight: 5, arbitrary: a }, { weight: 1, arbitrary: fc.constant(null) }) : a);
  if (s.enum) return fc.constantFrom(...s.enum);
  const branches = s.anyOf ?? s.oneOf;
  if (branches) return nullable(fc.oneof(...branches.map((b) => arbitraryFor(b, resolve, depth + 1))));
  const type = s.type ?? (s.properties || s.additionalProperties !== undefined ? 'object' : undefined);
  switch (type) {
    case 'string': return nullable(stringArb(s));
    case 'integer': return nullable(numberArb(s, true));
    case 'number': return nullable(numberArb(s, false));
    case 'boolean': return nullable(fc.boolean());
    case 'array': {
      if (depth > 6) return fc.constant([]);
      const item = arbitraryFor(s.items ?? {}, resolve, depth + 1);
      const bounds = { minLength: s.minItems ?? 0, maxLength: Math.max(s.minItems ?? 0, Math.min(s.maxItems ?? 4, 4)) };
      const arr = s.uniqueItems ? fc.uniqueArray(item, { ...bounds, selector: (v) => JSON.stringify(v) }) : fc.array(item, bounds);
      return nullable(arr);
    }
    case 'object': return nullable(objectArb(s, resolve, depth));
    default: return fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.constant(null));
  }
}

function objectArb(s: Schema, resolve: Resolve, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const props = s.properties ?? {};
  const required = new Set(s.required ?? []);
  const keys = Object.keys(props);
  // past some depth only required properties, so recursive schemas end
  const chosen = depth > 4 ? keys.filter((k) => required.has(k)) : keys;
  const record = fc.record(Object.fromEntries(chosen.map((k) => [k, arbitraryFor(props[k]!, resolve, depth + 1)])), { requiredKeys: chosen.filter((k) => required.has(k)) });
  const extra = s.additionalProperties;
  const min = s.minProperties ?? 0;
  if (extra === undefined || extra === false || depth > 4) return record.filter((o) => Object.keys(o).length >= min);
  const valueArb = extra === true ? fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean()) : arbitraryFor(extra, resolve, depth + 1);
  const maxKeys = Math.max(min, Math.min(s.maxProperties ?? 4, 4));
  return fc.tuple(record, fc.dictionary(propertyName.filter((k) => !(k in props)), valueArb, { minKeys: Math.max(0, min - keys.length), maxKeys }))
    .map(([a, b]) => ({ ...b, ...a }))
    .filter((o) => Object.keys(o).length >= min && Object.keys(o).length <= (s.maxProperties ?? Infinity));
}
