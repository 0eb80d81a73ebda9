import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { api, type TestDaemon } from './daemon.js';
import { WAIT_CEILING_MS } from './wait.js';

const run = promisify(execFile);

/** Result of one dig run: status, flags, answer data in order, and the raw text. */
export interface DigResult { status: string; flags: string[]; answers: string[]; text: string; ecs: string | undefined }

/**
 * Runs `dig @127.0.0.1 -p <port> <args>` (a real resolver client), one try, and parses the status,
 * header flags, answer data and the CLIENT-SUBNET echo. The try waits up to 10 s for its reply: an
 * answer that comes costs nothing, and a loaded machine's late reply is not a lost one.
 */
export async function dig(port: number, args: string[], bin = 'dig'): Promise<DigResult> {
  const base = bin === 'dig' ? ['@127.0.0.1', '-p', String(port), '+time=10', '+tries=1'] : ['@127.0.0.1', '-p', String(port), '+time=10', '+retry=0'];
  const { stdout } = await run(bin, [...base, ...args], { timeout: WAIT_CEILING_MS });
  const status = /status: ([A-Z]+)/.exec(stdout)?.[1] ?? 'NONE';
  const flags = (/flags: ([a-z ]+);/.exec(stdout)?.[1] ?? '').trim().split(/\s+/);
  const answers: string[] = [];
  const sec = stdout.split(/;; ANSWER SECTION:\n/)[1];
  if (sec) {
    for (const line of sec.split('\n')) {
      if (line.trim() === '' || line.startsWith(';')) break;
      const parts = line.trim().split(/\s+/);
      answers.push(parts.slice(4).join(' '));
    }
  }
  const ecs = /CLIENT-SUBNET: (\S+)/.exec(stdout)?.[1];
  return { status, flags, answers, text: stdout, ecs };
}

/**
 * Runs dig until its answers equal `want` (compared sorted when `sorted`), at most WAIT_CEILING_MS:
 * a health verdict set on the main thread reaches the DNS worker threads on a later turn (docs/dns.md
 * "Workers"), so a query right after it may be answered from the previous view. Fails with the
 * last answers seen.
 */
export async function untilAnswers(port: number, args: string[], want: string[], what: string, sorted = false): Promise<DigResult> {
  const norm = (xs: string[]) => (sorted ? [...xs].sort() : xs);
  const deadline = Date.now() + WAIT_CEILING_MS;
  for (;;) {
    const r = await dig(port, args);
    if (JSON.stringify(norm(r.answers)) === JSON.stringify(norm(want))) return r;
    if (Date.now() > deadline) assert.deepEqual(norm(r.answers), norm(want), `${what} (the last answers within ${WAIT_CEILING_MS / 1000} s)`);
    await new Promise((res) => setTimeout(res, 20));
  }
}

/** Creates a pool with members and a service over the REST API; returns the ids. */
export async function makeService(d: TestDaemon, svc: Record<string, unknown>, members: Record<string, unknown>[], georules: Record<string, unknown>[] = []) {
  const pool = await api(d.url, 'POST', '/api/v1/pools', { name: `p-${String(svc.name)}` });
  const memberIds: string[] = [];
  for (const m of members) {
    const r = await api(d.url, 'POST', `/api/v1/pools/${pool.body.id}/members`, { port: 80, ...m });
    if (r.status !== 201) throw new Error(`member: ${JSON.stringify(r.body)}`);
    memberIds.push(r.body.id);
  }
  for (const g of georules) await api(d.url, 'POST', `/api/v1/pools/${pool.body.id}/georules`, g);
  const s = await api(d.url, 'POST', '/api/v1/services', { poolId: pool.body.id, ...svc });
  if (s.status !== 201) throw new Error(`service: ${JSON.stringify(s.body)}`);
  return { poolId: pool.body.id as string, serviceId: s.body.id as string, memberIds };
}

/**
 * Sends `n` A queries for `name` over UDP (at most `inflight` outstanding) and returns the first
 * answer of each reply. A bounded load loop for distribution checks; fails on a lost reply.
 */
export async function firstAnswers(port: number, name: string, n: number, inflight = 16): Promise<string[]> {
  const { createSocket } = await import('node:dgram');
  const dnsPacket = (await import('dns-packet')).default;
  const s = createSocket('udp4');
  const out: string[] = [];
  let next = 0;
  let done = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${done}/${n} replies`)), WAIT_CEILING_MS);
      const send = () => { const id = next++; s.send(dnsPacket.encode({ type: 'query', id, questions: [{ name, type: 'A' }] }), port, '127.0.0.1'); };
      s.on('message', (m) => {
        const r = dnsPacket.decode(m);
        out.push(String((r.answers?.[0] as { data?: string } | undefined)?.data ?? ''));
        if (++done === n) { clearTimeout(timer); resolve(); } else if (next < n) send();
      });
      for (let i = 0; i < Math.min(inflight, n); i++) send();
    });
  } finally { s.close(); }
  return out;
}

/** Output of a dig or kdig run that may fail (a refused transfer): stdout and stderr together, never throws. */
export async function digText(port: number, args: string[], bin: 'dig' | 'kdig' = 'dig'): Promise<string> {
  const base = bin === 'dig' ? ['@127.0.0.1', '-p', String(port), '+time=5', '+tries=1'] : ['@127.0.0.1', '-p', String(port), '+time=5', '+retry=0'];
  try {
    const { stdout, stderr } = await run(bin, [...base, ...args], { timeout: 60_000, maxBuffer: 512 * 1024 * 1024 });
    return stdout + stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    return `${e.stdout ?? ''}${e.stderr ?? ''}\n${e.message}`;
  }
}

/**
 * A zone transfer over a raw TCP connection: sends `query` (a complete DNS message) with its
 * length prefix and collects the reply messages until the second SOA of the answer sections, a
 * reply that is not NOERROR, or the connection closes. Bounded by `timeoutMs`.
 */
export async function transferRaw(port: number, query: Buffer, timeoutMs = 30_000): Promise<Buffer[]> {
  const { connect } = await import('node:net');
  const dnsPacket = (await import('dns-packet')).default;
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    const msgs: Buffer[] = [];
    let acc = Buffer.alloc(0);
    let soas = 0;
    const timer = setTimeout(() => { sock.destroy(); reject(new Error(`transfer: ${msgs.length} messages in ${timeoutMs} ms`)); }, timeoutMs);
    const done = () => { clearTimeout(timer); sock.destroy(); resolve(msgs); };
    sock.on('error', (err) => { clearTimeout(timer); reject(err); });
    sock.on('close', done);
    sock.on('connect', () => { const h = Buffer.alloc(2); h.writeUInt16BE(query.length); sock.write(Buffer.concat([h, query])); });
    sock.on('data', (chunk: Buffer) => {
      acc = Buffer.concat([acc, chunk]);
      while (acc.length >= 2 && acc.length >= 2 + acc.readUInt16BE(0)) {
        const m = acc.subarray(2, 2 + acc.readUInt16BE(0));
        acc = acc.subarray(2 + m.length);
        msgs.push(Buffer.from(m));
        const p = dnsPacket.decode(m);
        soas += (p.answers ?? []).filter((a) => a.type === 'SOA').length;
        if ((m.readUInt16BE(2) & 0xf) !== 0 || soas >= 2) return done();
      }
    });
  });
}

/** Makes a key with `dnssec-keygen` (BIND) in `dir`; returns its base path (`dir/K<zone>+<alg>+<tag>`). */
export async function dnssecKeygen(dir: string, zone: string, algorithm: 'ECDSAP256SHA256' | 'ED25519', ksk: boolean): Promise<string> {
  const { stdout } = await run('dnssec-keygen', ['-q', '-K', dir, '-a', algorithm, ...(ksk ? ['-f', 'KSK'] : []), zone], { timeout: 15_000 });
  return `${dir}/${stdout.trim()}`;
}

/** A delv trust-anchor file body trusting the DNSKEY in `keyFile` (a BIND `.key` file) for its zone. */
export function staticKeyAnchor(keyText: string): string {
  const [owner, , , flags, proto, alg, ...key] = keyText.split('\n').find((l) => l.trim() !== '' && !l.startsWith(';'))!.trim().split(/\s+/);
  return `trust-anchors { ${owner} static-key ${flags} ${proto} ${alg} "${key.join('')}"; };\n`;
}

/**
 * Validates `name type` with `delv` (BIND's validating resolver) against the server on `port`,
 * trusting only the anchor in `anchorFile` for `zone`. Returns stdout and stderr together; never throws.
 */
export async function delv(port: number, anchorFile: string, zone: string, args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run('delv', ['@127.0.0.1', '-p', String(port), '-a', anchorFile, `+root=${zone}`, ...args], { timeout: 20_000 });
    return stdout + stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    return `${e.stdout ?? ''}${e.stderr ?? ''}\n${e.message}`;
  }
}

/** Sends one UDP message to 127.0.0.1:`port` and returns the first reply; rejects after `timeoutMs`. */
export async function udpExchange(port: number, msg: Buffer, timeoutMs = 3000): Promise<Buffer> {
  const { createSocket } = await import('node:dgram');
  const s = createSocket('udp4');
  try {
    return await new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no reply in ${timeoutMs} ms`)), timeoutMs);
      s.once('message', (m) => { clearTimeout(timer); resolve(m); });
      s.send(msg, port, '127.0.0.1');
    });
  } finally { s.close(); }
}
