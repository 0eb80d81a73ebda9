import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { parseDuration, parseMicros } from './duration.js';
import { isDomainName, isFqdn, isIpAddress, isIpv4Address, parseCidr, scopeIdOf } from '../net/ip.js';
import { isHttpUrl, isPrintableName, isRedirectHost } from './text-rules.js';

// ajv-formats ships CommonJS with a default export; under NodeNext it arrives wrapped.
const addFormats = addFormatsModule as unknown as // reason: CommonJS default export seen through NodeNext
   typeof addFormatsModule.default;

/**
 * Adds the project's formats to an ajv instance (also used as a fastify ajv plugin): duration, micros, ip,
 * ipv4, cidr, domain, fqdn, http-url, printable, redirect-host.
 */
export function addProjectFormats(ajv: Ajv): Ajv {
  addFormats(ajv, ['uri', 'email', 'date-time']);
  ajv.addFormat('duration', { type: 'string', validate: (s: string) => parseDuration(s) !== undefined });
  ajv.addFormat('micros', { type: 'string', validate: (s: string) => parseMicros(s) !== undefined });
  // IP literals without a scope id: an answer or a rule cannot carry `%eth0` (docs/api.md "Input rules").
  ajv.addFormat('ip', { type: 'string', validate: (s: string) => isIpAddress(s) });
  ajv.addFormat('ipv4', { type: 'string', validate: (s: string) => isIpv4Address(s) });
  ajv.addFormat('cidr', { type: 'string', validate: (s: string) => parseCidr(s) !== undefined });
  ajv.addFormat('domain', { type: 'string', validate: (s: string) => isDomainName(s) });
  ajv.addFormat('http-url', { type: 'string', validate: (s: string) => isHttpUrl(s) });
  ajv.addFormat('fqdn', { type: 'string', validate: (s: string) => isFqdn(s) });
  ajv.addFormat('printable', { type: 'string', validate: (s: string) => isPrintableName(s) });
  ajv.addFormat('redirect-host', { type: 'string', validate: (s: string) => isRedirectHost(s) });
  return ajv;
}

const FORMAT_RULES: Record<string, string> = {
  duration: 'a duration such as 500ms, 10s, 1m30s or 1h',
  micros: 'a duration such as 250us, 1ms or 0s',
  ip: 'a valid IPv4 or IPv6 address',
  ipv4: 'a valid IPv4 address',
  cidr: 'a valid CIDR such as 10.0.0.0/8',
  domain: 'a valid DNS name',
  'http-url': 'an http or https URL (a port, when given, in 1..65535)',
  fqdn: 'a fully qualified DNS name with a trailing dot, e.g. app.example.com.',
  'redirect-host': 'a host name without scheme, port or path (www.example.com), or *. and a name (*.example.com); not an IP address',
  printable: 'printable text: no control characters, no invisible format characters (zero-width, bidi overrides or isolates), no line or paragraph separators',
};

/** The rule a format error breaks; an IP or CIDR with a scope id says so, quoting the scope. */
function describeFormat(format: string, data: unknown): string {
  if ((format === 'ip' || format === 'cidr') && typeof data === 'string') {
    const scope = scopeIdOf(data);
    if (scope !== undefined) return `must not carry a scope id (%${scope})`;
  }
  return `must be ${FORMAT_RULES[format] ?? format}`;
}

/** Keywords whose failure a schema may describe in words with `x-rule` (a pattern says little to a person). */
const RULE_KEYWORDS = new Set(['pattern', 'minLength', 'maxLength', 'minimum', 'maximum']);

/**
 * Renders one ajv error as `rule` text (without the path). A schema's `x-rule` (`a whole number
 * from 1 to 100`) names the rule its `pattern` and bounds express, read from the error's
 * `parentSchema` (ajv's `verbose` option).
 */
export function describeAjvError(e: ErrorObject): string {
  const rule = (e.parentSchema as { 'x-rule'?: unknown } | undefined)?.['x-rule'];
  if (typeof rule === 'string' && RULE_KEYWORDS.has(e.keyword)) return `must be ${rule}`;
  switch (e.keyword) {
    case 'additionalProperties':
      return `unknown key "${(e.params as { additionalProperty: string }).additionalProperty}"`;
    case 'required':
      return `missing required key "${(e.params as { missingProperty: string }).missingProperty}"`;
    case 'format':
      return describeFormat((e.params as { format: string }).format, e.data);
    case 'enum':
      return `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'type':
      return `must be of type ${(e.params as { type: string }).type}`;
    default:
      return e.message ?? e.keyword;
  }
}

/** Converts an ajv instancePath (`/dns/port`) to path segments (`['dns','port']`). */
export function pointerToPath(pointer: string): (string | number)[] {
  if (!pointer) return [];
  return pointer.slice(1).split('/').map((seg) => {
    const s = seg.replace(/~1/g, '/').replace(/~0/g, '~');
    return /^\d+$/.test(s) ? Number(s) : s;
  });
}
