import { execFile, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./dnspython-client.py', import.meta.url));

/** The first python3 that imports dnspython (Debian's `python3-dnspython` sits under /usr/bin/python3). */
function findPython(): string {
  for (const bin of ['python3', '/usr/bin/python3']) {
    if (spawnSync(bin, ['-c', 'import dns.query, dns.update, dns.zone']).status === 0) return bin;
  }
  throw new Error('no python3 with dnspython here: install python3-dnspython (scripts/install-peers.sh)');
}

let python: string | undefined;

/** A TSIG key as dnspython takes it: the name, `hmac-sha256` style algorithm, the base64 secret. */
export interface PyKey { key: string; algorithm: string; secret: string }

/** One TXT change: add or delete `value` at `name` (a FQDN without the final dot). */
export type PyOp = ['add' | 'delete', string, number, string];

async function runClient<T>(cmd: 'update' | 'axfr', arg: Record<string, unknown>): Promise<T> {
  python ??= findPython();
  const bin = python;
  return new Promise((resolve, reject) => {
    execFile(bin, [SCRIPT, cmd, JSON.stringify(arg)], { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) { reject(new Error(`dnspython ${cmd}: ${err.message}\n${stderr}`)); return; }
      resolve(JSON.parse(stdout) as T);
    });
  });
}

/** Sends one RFC 2136 UPDATE of TXT records with stock dnspython (`dns.query.tcp` or `.udp`); resolves the rcode text or the error. */
export function pyUpdate(port: number, zone: string, key: PyKey, ops: PyOp[], tcp = true): Promise<{ rcode?: string; error?: string }> {
  return runClient('update', { port, zone, ...key, ops, tcp });
}

/** A zone transfer with stock dnspython (`dns.query.xfr` into `dns.zone.from_xfr`); resolves `[name, ttl, type, rdata]` rows or the error. */
export function pyAxfr(port: number, zone: string, key: PyKey): Promise<{ records?: [string, number, string, string][]; error?: string }> {
  return runClient('axfr', { port, zone, ...key });
}
