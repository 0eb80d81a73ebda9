/**
 * Members in a network namespace of their own, for `npm run bench:health -- --netns` (root only).
 *
 * On loopback every packet is handled inside the system call that sent it, so the member's half of
 * each handshake (the SYN's listener lookup, the SYN-ACK, the RST's handling) is billed to the
 * prober, which a remote member's host would do. Here the members live in a namespace joined to
 * this one by a veth pair, and Receive Packet Steering sends each side's received packets to its
 * own CPU: what the members receive is processed on CPU 1 (where their listener processes run),
 * what the prober receives (the SYN-ACKs, and the RST the kernel answers them with) on CPU 0,
 * where the checker runs. CPU 0's busy time is then the prober's whole cost: its JavaScript, its
 * system calls and the kernel work of its own packets.
 *
 * Addresses: the members' 10.64.0.0/14 is local to the namespace (a `local` route on its lo, so
 * every listener binds its own address), routed there from here through 10.250.0.1/30 ↔ .2.
 *
 * Steered packets wait in the other CPU's backlog, which holds net.core.netdev_max_backlog packets
 * (1,000 by default; beyond it they are dropped, counted in /proc/net/softnet_stat). A batch of
 * SYNs is larger than that, so it is raised to 100,000 while the bench runs and put back after (a
 * NIC's receive ring and NAPI take that role on a real host).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

export interface MemberNetns {
  /** the namespace's name (`ip netns exec <name> …`) */
  name: string;
  /** member i's address */
  ipOf: (i: number) => string;
  /** the first two octets of member 0's address, as health-farm.py takes them */
  base: string;
  /** removes the namespace, the veth pair and the route; idempotent */
  close: () => void;
}

const run = (args: string[]) => execFileSync(args[0]!, args.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });

/** Creates the namespace and the pair; throws (after cleaning up) when this is not root or `ip` is missing. */
export function createMemberNetns(): MemberNetns {
  const tag = String(process.pid % 100000);
  const name = `gslbd-bench-${tag}`;
  const here = `gbh${tag}a`;
  const there = `gbh${tag}b`;
  let closed = false;
  const backlogFile = '/proc/sys/net/core/netdev_max_backlog';
  const backlog = readFileSync(backlogFile, 'utf8').trim();
  const close = () => {
    if (closed) return;
    closed = true;
    try { writeFileSync(backlogFile, backlog); } catch { /* not ours to set */ }
    for (const args of [['ip', 'route', 'del', '10.64.0.0/14'], ['ip', 'link', 'del', here], ['ip', 'netns', 'del', name]]) {
      try { run(args); } catch { /* already gone */ }
    }
  };
  try {
    run(['ip', 'netns', 'add', name]);
    run(['ip', 'link', 'add', here, 'type', 'veth', 'peer', 'name', there]);
    run(['ip', 'link', 'set', there, 'netns', name]);
    run(['ip', 'addr', 'add', '10.250.0.1/30', 'dev', here]);
    run(['ip', 'link', 'set', here, 'up']);
    const inNs = (cmd: string) => run(['ip', 'netns', 'exec', name, 'sh', '-c', cmd]);
    inNs(`ip link set lo up && ip addr add 10.250.0.2/30 dev ${there} && ip link set ${there} up`);
    inNs('ip route add local 10.64.0.0/14 dev lo && ip route add default via 10.250.0.1');
    // RPS: members' packets on CPU 1, the prober's on CPU 0 (masks: bit n = CPU n)
    inNs(`echo 2 > /sys/class/net/${there}/queues/rx-0/rps_cpus`);
    run(['sh', '-c', `echo 1 > /sys/class/net/${here}/queues/rx-0/rps_cpus`]);
    run(['ip', 'route', 'add', '10.64.0.0/14', 'via', '10.250.0.2']);
    writeFileSync(backlogFile, '100000');
  } catch (err) {
    close();
    const e = err as { stderr?: Buffer; message: string };
    throw new Error(`--netns: cannot set up the member namespace (needs root and iproute2): ${e.stderr?.toString().trim() || e.message}`);
  }
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => { close(); process.exit(130); });
  process.once('exit', close);
  return { name, ipOf: (i) => `10.${64 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`, base: '10.64', close };
}

/** Jiffies of one CPU from /proc/stat: busy (everything but idle and iowait) and softirq. */
export function cpuJiffies(cpu: number): { busy: number; softirq: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n').find((l) => l.startsWith(`cpu${cpu} `));
  if (!line) return { busy: NaN, softirq: NaN, total: NaN };
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number) as number[];
  const busy = user! + nice! + system! + irq! + softirq! + steal!;
  return { busy, softirq: softirq!, total: busy + idle! + iowait! };
}

/** Pins every thread of this process to `cpu` (new threads inherit it). */
export function pinSelf(cpu: number): void {
  run(['taskset', '-a', '-p', '-c', String(cpu), String(process.pid)]);
}
