import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WAIT_CEILING_MS } from './wait.js';

/** One BIRD 2 process a test started, with one BGP protocol `gslb` towards gslbd on loopback. */
export interface Bird {
  dir: string;
  sock: string;
  /** the port BIRD listens on (gslbd's `remotePort`) */
  port: number;
  /** `birdc show route protocol gslb`: the prefixes BIRD holds from gslbd */
  routes(): string[];
  /** `birdc show route all protocol gslb`: the routes with their attributes, as text */
  routesAll(): string;
  /** the `gslb` line of `birdc show protocols` (state and info) */
  protocol(): string;
  /** BIRD's own log */
  log(): string;
  /** stops the process (SIGTERM) and waits for it */
  stop(): Promise<void>;
  /** starts it again with the same config */
  restart(): Promise<void>;
  /** stops it and removes its files */
  dispose(): Promise<void>;
}

/** What BIRD peers with: its ASN, gslbd's ASN and port (`bgp.listenPort`). */
export interface BirdOptions { asn: number; port: number; peerAsn: number; peerPort: number; holdTime?: number }

function birdc(sock: string, ...args: string[]): string {
  const r = spawnSync('birdc', ['-s', sock, ...args], { encoding: 'utf8', timeout: 5000 });
  return r.stdout ?? '';
}

/**
 * Starts `bird -f` in the foreground with a temporary config: a BGP session from 127.0.0.1:`port`
 * to gslbd at 127.0.0.1:`peerPort` (multihop, so the loopback next hop resolves through the
 * `direct` routes of lo), importing everything, exporting nothing, retrying every second.
 */
export async function startBird(o: BirdOptions): Promise<Bird> {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-bird-'));
  const sock = join(dir, 'bird.ctl');
  const conf = join(dir, 'bird.conf');
  writeFileSync(conf, `log "${join(dir, 'bird.log')}" all;
router id 192.0.2.250;
protocol device {}
protocol direct { ipv4; interface "lo"; }
protocol bgp gslb {
  local 127.0.0.1 port ${o.port} as ${o.asn};
  neighbor 127.0.0.1 port ${o.peerPort} as ${o.peerAsn};
  multihop;
  hold time ${o.holdTime ?? 9};
  connect retry time 1;
  connect delay time 1;
  error wait time 1, 2;
  ipv4 { import all; export none; };
}
`);
  let proc: ChildProcess | undefined;
  const launch = async () => {
    const out = openSync(join(dir, 'stdout.log'), 'a');
    proc = spawn('bird', ['-f', '-c', conf, '-s', sock], { stdio: ['ignore', out, out] });
    closeSync(out);
    const until = Date.now() + WAIT_CEILING_MS;
    while (!birdc(sock, 'show', 'status').includes('Daemon is up')) {
      if (proc.exitCode !== null) throw new Error(`bird exited ${proc.exitCode}: ${readFileSync(join(dir, 'stdout.log'), 'utf8')}`);
      if (Date.now() > until) throw new Error(`bird did not come up in ${WAIT_CEILING_MS / 1000} s: ${birdc(sock, 'show', 'status')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const stop = async () => {
    const p = proc;
    proc = undefined;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGTERM');
    const t = setTimeout(() => p.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  };
  await launch();
  const prefixes = (text: string) => text.split('\n').map((l) => /^(\d+\.\d+\.\d+\.\d+\/\d+)\s/.exec(l)?.[1]).filter((p): p is string => !!p).sort();
  return {
    dir, sock, port: o.port,
    routes: () => prefixes(birdc(sock, 'show', 'route', 'protocol', 'gslb')),
    routesAll: () => birdc(sock, 'show', 'route', 'all', 'protocol', 'gslb'),
    protocol: () => birdc(sock, 'show', 'protocols').split('\n').find((l) => l.startsWith('gslb')) ?? '',
    log: () => { try { return readFileSync(join(dir, 'bird.log'), 'utf8'); } catch { return ''; } },
    stop,
    restart: launch,
    dispose: async () => { await stop(); rmSync(dir, { recursive: true, force: true }); },
  };
}
