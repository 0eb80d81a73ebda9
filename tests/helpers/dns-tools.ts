import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { api, type TestDaemon } from './daemon.js';

const run = promisify(execFile);

/** Result of one dig run: status, flags, answer data in order, and the raw text. */
export interface DigResult { status: string; flags: string[]; answers: string[]; text: string; ecs: string | undefined }

/**
 * Runs `dig @127.0.0.1 -p <port> <args>` (a real resolver client) with short timeouts and parses
 * the status, header flags, answer data and the CLIENT-SUBNET echo.
 */
export async function dig(port: number, args: string[], bin = 'dig'): Promise<DigResult> {
  const base = bin === 'dig' ? ['@127.0.0.1', '-p', String(port), '+time=2', '+tries=1'] : ['@127.0.0.1', '-p', String(port), '+time=2', '+retry=0'];
  const { stdout } = await run(bin, [...base, ...args], { timeout: 15_000 });
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
      const timer = setTimeout(() => reject(new Error(`only ${done}/${n} replies`)), 10_000);
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
