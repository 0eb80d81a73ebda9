import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import dnsPacket from 'dns-packet';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { dig, makeService } from '../helpers/dns-tools.js';
import { WAIT_CEILING_MS } from '../helpers/wait.js';

// DNS over TCP under dns.tcp.* limits (docs/dns.md "TCP limits"): deadlines, caps, eviction, the
// counters, and dig still answered while a thousand slow connections trickle bytes.

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A daemon serving www.tcp.test (192.0.2.1) with metrics on, and the given dns.tcp limits. */
async function daemon(tcp: Record<string, unknown>): Promise<{ d: TestDaemon; port: number; mport: number }> {
  const d = await startTestDaemon({
    dns: { listenAddr: '127.0.0.1', port: 0, domain: 'tcp.test', tcp } as never,
    metrics: { enablePrometheus: true, listenAddr: '127.0.0.1', port: 0 },
  } as never);
  await makeService(d, { name: 'web', domain: 'www.tcp.test.', ttl: 60 }, [{ ipAddress: '192.0.2.1' }]);
  return { d, port: d.ports.dnsPort as number, mport: d.ports.metricsPort as number };
}

/** One sample of a metric from GET /metrics (labels matched as given; no labels: the first sample). */
async function metric(mport: number, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${mport}/metrics`)).text();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

/** Polls a metric until `ok` holds (at most `ms`, WAIT_CEILING_MS by default); returns the last value. */
async function metricUntil(mport: number, name: string, labels: Record<string, string>, ok: (v: number) => boolean, ms = WAIT_CEILING_MS): Promise<number> {
  const end = Date.now() + ms;
  let v = await metric(mport, name, labels);
  while (!(v !== undefined && ok(v)) && Date.now() < end) { await sleep(25); v = await metric(mport, name, labels); }
  return v ?? NaN;
}

/** A raw TCP client: connects from `localAddress`, sends framed queries, records replies and when the server closed. */
class Client {
  readonly sock: Socket;
  readonly replies: dnsPacket.Packet[] = [];
  closedAt: number | undefined;
  /** when each query was sent (performance.now) */
  readonly sent: number[] = [];
  private acc = Buffer.alloc(0);
  private readonly opened: Promise<void>;
  private readonly closed: Promise<void>;

  constructor(port: number, localAddress = '127.0.0.1') {
    this.sock = connect({ port, host: '127.0.0.1', localAddress });
    this.opened = new Promise((r, j) => { this.sock.once('connect', () => r()); this.sock.once('error', j); });
    this.closed = new Promise((r) => this.sock.once('close', () => { this.closedAt = performance.now(); r(); }));
    this.sock.on('error', () => {});
    this.sock.on('data', (c: Buffer) => {
      this.acc = Buffer.concat([this.acc, c]);
      while (this.acc.length >= 2 && this.acc.length >= this.acc.readUInt16BE(0) + 2) {
        this.replies.push(dnsPacket.decode(this.acc.subarray(2, this.acc.readUInt16BE(0) + 2)));
        this.acc = this.acc.subarray(this.acc.readUInt16BE(0) + 2);
      }
    });
  }

  ready(): Promise<void> { return this.opened; }

  /** Sends one A query for www.tcp.test and waits (at most WAIT_CEILING_MS) for its reply. */
  async query(id: number): Promise<string | undefined> {
    this.sent.push(performance.now());
    this.sock.write(dnsPacket.streamEncode({ type: 'query', id, questions: [{ type: 'A', name: 'www.tcp.test' }] }));
    const end = Date.now() + WAIT_CEILING_MS;
    while (Date.now() < end) {
      const r = this.replies.find((p) => p.id === id);
      if (r) return (r.answers?.[0] as { data?: string } | undefined)?.data;
      if (this.closedAt !== undefined) return undefined;
      await sleep(10);
    }
    return undefined;
  }

  /** Resolves true once the server has closed the connection, false after `ms`. */
  async closedWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((r) => { timer = setTimeout(() => r(false), ms); });
    return Promise.race([this.closed.then(() => true), late]).finally(() => clearTimeout(timer));
  }

  end(): Promise<void> { this.sock.destroy(); return this.closed; }
}

test('message deadline: a body trickled after the length prefix is cut at messageTimeout; idle timeout between messages', async (t) => {
  const { d, port, mport } = await daemon({ messageTimeout: '300ms', idleTimeout: '600ms' });
  t.after(() => d.stop());

  // Length prefix for a 64-byte message, then one body byte every 50 ms: bytes keep coming, the
  // message never completes in time.
  const slow = new Client(port);
  await slow.ready();
  const first = performance.now();
  slow.sock.write(Buffer.from([0x00, 0x40]));
  const trickle = setInterval(() => { if (!slow.sock.destroyed) slow.sock.write(Buffer.from([0])); }, 50);
  const cut = await slow.closedWithin(WAIT_CEILING_MS);
  clearInterval(trickle);
  assert.ok(cut, 'closed although it kept sending');
  const after = slow.closedAt! - first;
  assert.ok(after >= 280, `closed ${Math.round(after)} ms after the first byte, not before the messageTimeout of 300 ms`);
  // by the message deadline (not the idle one, which the trickle keeps resetting): the counter says which
  assert.equal(await metricUntil(mport, 'gslbd_dns_tcp_timeouts_total', { kind: 'message' }, (v) => v >= 1), 1);

  // Idle: one query answered, then silence; closed about idleTimeout after the answer.
  const quiet = new Client(port);
  await quiet.ready();
  assert.equal(await quiet.query(1), '192.0.2.1');
  const answered = performance.now();
  assert.ok(await quiet.closedWithin(WAIT_CEILING_MS), 'idle connection closed');
  const idle = quiet.closedAt! - answered;
  assert.ok(idle >= 500, `closed ${Math.round(idle)} ms after the last answer, not before the idleTimeout of 600 ms`);
  assert.equal(await metricUntil(mport, 'gslbd_dns_tcp_timeouts_total', { kind: 'idle' }, (v) => v >= 1), 1);

  // A client that keeps asking (a query every 100 ms, 1.4 s in all) outlives the idle timeout of
  // 600 ms. A run in which this client itself was held up for half the idle timeout between two
  // queries proves nothing either way (the server may have been held up as long): it is run again.
  for (let run = 1; ; run++) {
    const busy = new Client(port);
    await busy.ready();
    for (let i = 0; i < 14 && busy.closedAt === undefined; i++) {
      await busy.query(100 + i);
      await sleep(100);
    }
    const stalled = Math.max(...busy.sent.slice(1).map((t, i) => t - busy.sent[i]!));
    const closed = busy.closedAt !== undefined;
    await busy.end();
    if (closed && stalled >= 300 && run < 5) continue;
    assert.equal(closed, false, `activity restarts the idle clock (the longest pause between two queries was ${Math.round(stalled)} ms)`);
    assert.equal(busy.replies.length, 14, 'every query on the kept connection answered');
    break;
  }
  assert.equal(await metricUntil(mport, 'gslbd_dns_tcp_connections', {}, (v) => v === 0), 0);
});

test('caps: per-source refusal, eviction of the oldest idle connection at the global cap, refusal when none is idle', async (t) => {
  const { d, port, mport } = await daemon({ maxConnections: 3, maxConnectionsPerSource: 2, messageTimeout: '10s', idleTimeout: '20s' });
  t.after(() => d.stop());
  const clients: Client[] = [];
  const open = async (src: string) => { const c = new Client(port, src); clients.push(c); await c.ready(); return c; };
  t.after(async () => { await Promise.all(clients.map((c) => c.end())); });
  // Lets the server read what the clients just sent.
  const settle = () => sleep(150);

  // Per source: the third connection from 127.0.0.5 is closed at once; another source gets in.
  const a1 = await open('127.0.0.5');
  const a2 = await open('127.0.0.5');
  const a3 = await open('127.0.0.5');
  assert.ok(await a3.closedWithin(WAIT_CEILING_MS), 'third connection from one source closed');
  const b1 = await open('127.0.0.6');
  await settle();
  assert.equal(a1.closedAt ?? a2.closedAt ?? b1.closedAt, undefined, 'connections under the caps stay open');
  assert.equal(await b1.query(1), '192.0.2.1');
  assert.equal(await metric(mport, 'gslbd_dns_tcp_refused_total', { reason: 'per_source' }), 1);
  assert.equal(await metric(mport, 'gslbd_dns_tcp_connections'), 3);

  // Global cap (3 open): a1 is the oldest but busy (half a message), a2 is idle and quieter than
  // b1 (which just answered a query): a new connection evicts a2.
  a1.sock.write(Buffer.from([0x00, 0x20, 0x00]));
  await settle();
  const c1 = await open('127.0.0.7');
  assert.ok(await a2.closedWithin(WAIT_CEILING_MS), 'oldest idle connection evicted');
  assert.equal(a1.closedAt ?? b1.closedAt, undefined, 'the busy and the more recently active connection are kept');
  assert.equal(await c1.query(2), '192.0.2.1', 'the new connection is served');
  assert.equal(await metric(mport, 'gslbd_dns_tcp_evicted_total'), 1);

  // None idle: everyone holds half a message; a new connection is refused.
  b1.sock.write(Buffer.from([0x00, 0x20]));
  c1.sock.write(Buffer.from([0x00]));
  await settle();
  const e1 = await open('127.0.0.8');
  assert.ok(await e1.closedWithin(WAIT_CEILING_MS), 'refused when no connection is idle');
  assert.equal(a1.closedAt ?? b1.closedAt ?? c1.closedAt, undefined, 'busy connections are never evicted');
  assert.equal(await metric(mport, 'gslbd_dns_tcp_refused_total', { reason: 'global_full' }), 1);
  assert.equal(await metric(mport, 'gslbd_dns_tcp_timeouts_total', { kind: 'idle' }), 0);
});

/**
 * The attacker, run in its own process (its own event loop and CPU, as a real one would have):
 * `n` connections from `sources`, each sending one byte every 0.5-1 s (a length prefix, then body
 * bytes of a message that never ends). A connection the server closes is reopened after 1-2 s, so
 * the attack holds as long as it runs. Bounded: at most `maxOpens` connections in all, and on
 * "stop" (or stdin closing) it destroys every socket, prints its totals and exits.
 */
const ATTACKER = `
import { connect } from 'node:net';
const { port, n, sources, maxOpens } = JSON.parse(process.argv[1]);
let running = true, opens = 0, closedByServer = 0, seed = 7;
const rand = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x7fffffff; };
const live = new Set();
const open = (i) => {
  if (!running || opens >= maxOpens) return;
  opens++;
  const s = connect({ port, host: '127.0.0.1', localAddress: sources[i % sources.length] });
  live.add(s);
  let timer;
  const tick = () => { s.write(Buffer.from([1])); timer = setTimeout(tick, 500 + rand() * 500); };
  s.on('connect', () => { timer = setTimeout(tick, 500 + rand() * 500); });
  s.on('error', () => {});
  s.on('data', () => {});
  s.on('close', () => {
    clearTimeout(timer);
    live.delete(s);
    if (!running) return;
    closedByServer++;
    setTimeout(() => open(i), 1000 + rand() * 1000);
  });
};
// Opened in waves of 100 so the listen backlog is not what refuses them.
for (let i = 0; i < n; i += 100) {
  for (let k = i; k < Math.min(n, i + 100); k++) open(k);
  await new Promise((r) => setTimeout(r, 20));
}
const report = setInterval(() => console.log(JSON.stringify({ opens, live: live.size, closedByServer })), 200);
const stop = () => {
  if (!running) return;
  running = false;
  clearInterval(report);
  const left = [...live];
  let closed = 0;
  const done = () => { if (++closed >= left.length) { console.log(JSON.stringify({ opens, live: 0, closedByServer, done: true })); process.exit(0); } };
  if (left.length === 0) { closed = -1; done(); }
  for (const s of left) { s.once('close', done); s.destroy(); }
};
process.stdin.on('data', stop);
process.stdin.on('end', stop);
`;

/** Starts the attacker process; `stats` follows its reports, `stop` ends it (bounded, then killed). */
function slowAttack(port: number, n: number, sources: string[], maxOpens: number) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', ATTACKER, JSON.stringify({ port, n, sources, maxOpens })], { stdio: ['pipe', 'pipe', 'inherit'] });
  const stats = { opens: 0, live: 0, closedByServer: 0 };
  let partial = '';
  child.stdout.on('data', (c: Buffer) => {
    const lines = (partial + c.toString()).split('\n');
    partial = lines.pop()!;
    for (const l of lines) if (l) Object.assign(stats, JSON.parse(l));
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return {
    stats,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.stdin.end('stop');
      const late = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(late);
      clearTimeout(killer);
    },
  };
}

const spread = Array.from({ length: 59 }, (_, i) => `127.0.0.${i + 2}`);

// The limits of this test: 59 sources × 8 = 472 slots at most for the attacker, below the 512 in
// all, so the caps alone keep room for everyone else; the default deadlines (2 s per message,
// 10 s idle) keep the attacker from holding the slots it does get.
const LIMITS = { maxConnections: 512, maxConnectionsPerSource: 8 };

for (const row of [
  { name: '1,000 slow connections from 59 sources', sources: spread },
  { name: '1,000 slow connections from one source', sources: ['127.0.0.2'] },
]) {
  test(`slow-connection attack, ${row.name}: dig +tcp keeps being answered`, async (t) => {
    const { d, port, mport } = await daemon(LIMITS);
    const attack = slowAttack(port, 1000, row.sources, 15_000);
    t.after(async () => { await attack.stop(); await d.stop(); });
    const held = LIMITS.maxConnectionsPerSource * row.sources.length;
    const filled = await metricUntil(mport, 'gslbd_dns_tcp_connections', {}, (v) => v >= held * 0.9, 10_000);
    assert.ok(filled >= held * 0.9, `the attack holds what the per-source cap lets it: ${filled} open`);
    // Past the first wave, whose connections all start together, into the attack's steady churn.
    await sleep(2000);

    const before = {
      opens: attack.stats.opens,
      message: (await metric(mport, 'gslbd_dns_tcp_timeouts_total', { kind: 'message' }))!,
      perSource: (await metric(mport, 'gslbd_dns_tcp_refused_total', { reason: 'per_source' }))!,
    };
    const results: string[] = [];
    let peak = 0;
    for (let i = 0; i < 10; i++) {
      try {
        const r = await dig(port, ['www.tcp.test', 'A', '+tcp']);
        results.push(`${r.status} ${r.answers.join(',')}`);
      } catch (err) {
        results.push(`failed: ${String((err as { stdout?: string }).stdout ?? err).trim().split('\n').pop()}`);
      }
      peak = Math.max(peak, (await metric(mport, 'gslbd_dns_tcp_connections')) ?? 0);
      await sleep(400);
    }
    const opens = attack.stats.opens - before.opens;
    const message = (await metric(mport, 'gslbd_dns_tcp_timeouts_total', { kind: 'message' }))! - before.message;
    const perSource = (await metric(mport, 'gslbd_dns_tcp_refused_total', { reason: 'per_source' }))! - before.perSource;
    await attack.stop();

    assert.deepEqual(results, Array(10).fill('NOERROR 192.0.2.1'), 'every dig +tcp answered during the attack');
    assert.ok(opens > 1000, `the attack kept opening connections while dig ran: ${opens}`);
    assert.ok(peak <= held + 1, `the attacker never holds more than the per-source cap allows: ${peak} open (dig included)`);
    assert.ok(perSource > 0, `connections over the per-source cap refused while dig ran: ${perSource}`);
    assert.ok(message > 0, `trickling connections cut at the message deadline while dig ran: ${message}`);
    assert.equal(await metricUntil(mport, 'gslbd_dns_tcp_connections', {}, (v) => v === 0), 0, 'every connection gone after the attack');
  });
}
