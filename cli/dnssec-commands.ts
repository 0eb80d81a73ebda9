import { DEFAULT_CONFIG_PATH, loadConfig } from '../runtime/config/load.js';
import type { Config } from '../runtime/config/types.js';
import { ValidationError } from '../runtime/errors.js';
import { DNSKEY_TTL } from '../runtime/dns/dnssec-answer.js';
import { dsRdata, loadDnssecKeys, type DnssecKey } from '../runtime/crypto/dnssec-keys.js';
import { toFqdn } from '../runtime/tenancy/names.js';
import { COMMANDS, output } from './commands.js';
import { inputError } from './exit-codes.js';

type Flags = Record<string, string | boolean>;
const str = (f: Flags, k: string) => (typeof f[k] === 'string' ? (f[k] as string) : undefined);

const USAGE = 'dnssec ds [--config FILE] [--zone NAME] | dnssec keys [--config FILE]';

/** The configuration and the keys of `dns.dnssec`, read as the daemon reads them. Errors: exit 2. */
function configuredKeys(flags: Flags): { cfg: Config; keys: DnssecKey[] } {
  const file = str(flags, 'config') ?? DEFAULT_CONFIG_PATH;
  let cfg: Config;
  try {
    cfg = loadConfig(file);
  } catch (err) {
    throw inputError(`--config ${file}: ${err instanceof ValidationError ? err.problems.join('; ') : (err as Error).message}`);
  }
  const { keys, problems } = loadDnssecKeys(cfg.dns.dnssec);
  if (problems.length) throw inputError(problems.map((p) => `${p.path.join('.')}: ${p.rule}`).join('; '));
  if (keys.length === 0) throw inputError(`--config ${file}: dns.dnssec.keys is empty`);
  return { cfg, keys };
}

/** One DS record as the parent zone takes it (zone-file form), per key signing the DNSKEY set. */
export function dsRecords(zone: string, keys: readonly DnssecKey[]): { zone: string; tag: number; algorithm: number; digestType: number; digest: string; state: string; text: string }[] {
  return keys.filter((k) => k.role !== 'zsk' && k.state !== 'retired').map((k) => {
    const ds = dsRdata(zone, k.dnskey);
    const digest = ds.subarray(4).toString('hex').toUpperCase();
    return { zone, tag: k.tag, algorithm: k.algorithm, digestType: 2, digest, state: k.state, text: `${zone} ${DNSKEY_TTL} IN DS ${k.tag} ${k.algorithm} 2 ${digest}` };
  });
}

/**
 * `gslbctl dnssec ds`: the DS records (SHA-256, RFC 4509) to hand to the parent zone, one per KSK
 * or CSK that is not retired, for `--zone` or `dns.domain`. `gslbctl dnssec keys`: each key's
 * tag, algorithm, role, state and file, never its private part. Both read the config file and
 * the key files offline (docs/dns.md "DNSSEC"); exit 2 when they cannot be used.
 */
COMMANDS.dnssec = {
  usage: USAGE,
  summary: 'print the DS records for the parent zone (ds), or list the DNSSEC keys of a config (keys)',
  values: ['config', 'zone'],
  booleans: [],
  aliases: { c: 'config' },
  async run(flags, args) {
    if (args.length !== 1) throw inputError(`usage: ${USAGE}`);
    switch (args[0]) {
      case 'ds': {
        const { cfg, keys } = configuredKeys(flags);
        const zone = str(flags, 'zone') ?? cfg.dns.domain;
        if (!zone) throw inputError('no zone: give --zone NAME (dns.domain is not set)');
        const records = dsRecords(toFqdn(zone), keys);
        if (records.length === 0) throw inputError('no key signs the DNSKEY set (a ksk or csk that is not retired)');
        output(flags, records.map(({ text: _text, ...r }) => r), () => records.map((r) => r.text).join('\n'));
        return 0;
      }
      case 'keys': {
        const { keys } = configuredKeys(flags);
        const rows = keys.map((k) => ({ tag: k.tag, algorithm: k.algorithm, role: k.role, state: k.state, flags: k.flags, file: k.file }));
        output(flags, rows, () => [
          'TAG    ALG  ROLE  STATE    FLAGS  FILE',
          ...rows.map((r) => `${String(r.tag).padEnd(6)} ${String(r.algorithm).padEnd(4)} ${r.role.padEnd(5)} ${r.state.padEnd(8)} ${String(r.flags).padEnd(6)} ${r.file}`),
        ].join('\n'));
        return 0;
      }
      default:
        throw inputError(`usage: ${USAGE}`);
    }
  },
};
