import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The configuration keys that name a local file or directory. A value beginning with `~/` is taken
 * from the home directory of the user running gslbd (as a shell would), so one config file can
 * give every user a place of their own (the quick start's database: `~/.local/state/gslbd/…`).
 * `[]` steps into every element of an array. Nothing else in a value is expanded.
 */
export const HOME_PATH_KEYS: readonly string[] = [
  'database.path', 'backup.dir', 'api.webuiPath', 'dns.dnssec.keys[].file',
  'dns.tls.certFile', 'dns.tls.keyFile',
  'loadbalancer.geoip.dbPath', 'loadbalancer.asn.dbPath', 'health.scriptPath', 'health.scriptDirs[]',
  'gitops.keyringFile', 'gitops.auth.sshKeyPath', 'gitops.replayLog',
  'state.nats.tls.caFile', 'state.nats.tls.certFile', 'state.nats.tls.keyFile',
  'state.nats.auth.nkeySeedFile', 'state.nats.auth.credsFile',
  'alerts.secretDirs[]', 'alerts.mailTemplatesDir', 'forms.files.dir', 'forms.spam.disposableDomainsFile',
];

const expand = (v: unknown, home: string): unknown => (typeof v === 'string' && v.startsWith('~/') ? join(home, v.slice(2)) : v);

function visit(node: unknown, steps: string[], home: string): void {
  if (node === null || typeof node !== 'object') return;
  const [head, ...rest] = steps as [string, ...string[]];
  const isArray = head.endsWith('[]');
  const key = isArray ? head.slice(0, -2) : head;
  const obj = node as Record<string, unknown>;
  if (!(key in obj)) return;
  if (isArray) {
    const arr = obj[key];
    if (!Array.isArray(arr)) return;
    for (let i = 0; i < arr.length; i++) {
      if (rest.length) visit(arr[i], rest, home);
      else arr[i] = expand(arr[i], home);
    }
  } else if (rest.length) visit(obj[key], rest, home);
  else obj[key] = expand(obj[key], home);
}

/** Expands a leading `~/` in every HOME_PATH_KEYS value of a parsed configuration, in place. */
export function expandHomePaths(cfg: unknown, home: string = homedir()): void {
  for (const k of HOME_PATH_KEYS) visit(cfg, k.split('.'), home);
}
