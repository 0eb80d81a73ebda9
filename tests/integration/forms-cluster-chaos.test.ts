/**
 * Forms in a cluster under a node failure (docs/forms.md "In a cluster"): 1,000 submissions posted
 * over three gslbd nodes (one nats-server), one node SIGKILLed midway. Every acknowledged
 * submission is listed by each surviving node, and every submission the cluster stored (an
 * unanswered one included) reaches the webhook receiver: after dropping repeats by `webhook-id`,
 * once each, none missing, no submission under two ids. Usage on the survivors counts them all.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, spawnGslbd, startNats, stopAllGslbd, stopAllNats, waitFor, type GslbdNode } from '../helpers/nats.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const KEY = 'k'.repeat(64);
const ENV = { GSLB_API_KEY: KEY, GSLB_SECRET_KEY: '5'.repeat(64), GSLB_STATE_CATCHUP: '1s' };
const SYS = { authorization: `Bearer ${KEY}` };
const STATE = { enableConfigSync: true, heartbeatInterval: '300ms', heartbeatTTL: '1500ms', config: { applyTimeout: '3s' } };
const FORMS = {
  defaultTier: 'pro',
  rateLimits: { perIpPerMinute: 1_000_000, perKeyPerMinute: 1_000_000 },
  deliveries: { allowPrivateTargets: ['127.0.0.0/8'], pollIntervalMs: 100, timeoutMs: 2_000, retryDelaysMs: [200, 500, 1_000, 2_000, 4_000] },
  cluster: { leaseMs: 3_000 },
};
const TOTAL = 1_000;
const PARALLEL = 24;

let nodes: GslbdNode[];
let formKey: string;
/** What the receiver got: webhook-id and submission id, recorded when the body arrived (before the answer). */
const received: { webhookId: string; sid: number }[] = [];
/** A webhook receiver that answers 150 ms late, so deliveries are in flight when the node dies. */
let receiver: Server;

const pub = (n: GslbdNode, method: string, path: string, body?: unknown) => call(n.url, method, `/public/v1${path}`, body, { authorization: `Bearer ${formKey}` });

/** Every submission of a form a node lists: `n` → id. */
async function listed(n: GslbdNode, form: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (let page = 1; ; page++) {
    const r = await pub(n, 'GET', `/form/${form}/submission?limit=100&page=${page}&order=asc&sort=id`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    for (const s of r.body.data as { id: number; data: { n: string } }[]) out.set(s.data.n, s.id);
    if (page * 100 >= r.body.total) return out;
  }
}

before(async () => {
  const nats = await startNats('fchaos');
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { submission: { id: number } } };
      received.push({ webhookId: req.headers['webhook-id'] as string, sid: body.data.submission.id });
      setTimeout(() => res.writeHead(200).end('{}'), 150);
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  nodes = await Promise.all(['a', 'b', 'c'].map((id) => spawnGslbd(id, { ...STATE, nats: { servers: [nats.url] } }, { forms: FORMS }, ENV)));
  for (const n of nodes) await waitFor(`${n.id} sees the others`, async () => (await call(n.url, 'GET', '/api/v1/cluster', undefined, SYS)).body?.liveNodes?.length === 3, 30_000);
  const k = await call(nodes[0]!.url, 'POST', '/api/v1/apikeys?tenant=default', { name: 'chaos', scopes: ['forms:read', 'forms:write', 'submissions:read'] }, SYS);
  assert.equal(k.status, 201, JSON.stringify(k.body));
  formKey = k.body.key;
  for (const n of nodes) await waitFor(`${n.id} knows the key`, async () => (await pub(n, 'GET', '/form')).status === 200);
  (globalThis as { hookURL?: string }).hookURL = url;
});

after(async () => {
  await stopAllGslbd();
  await stopAllNats();
  receiver.closeAllConnections();
  await new Promise<void>((r) => receiver.close(() => r()));
});

test('1,000 submissions over three nodes, one SIGKILLed midway: none lost, each delivered once after dedup by webhook-id, usage matches', async () => {
  const f = await pub(nodes[0]!, 'POST', '/form', { name: 'chaos' });
  assert.equal(f.status, 201);
  const formId = f.body.id as string;
  const a = await pub(nodes[0]!, 'POST', `/form/${formId}/action`, { form_id: formId, type: 'webhook', config: { url: `${(globalThis as { hookURL?: string }).hookURL}/chaos` } });
  assert.equal(a.status, 201);
  for (const n of nodes) await waitFor(`${n.id} has the action`, async () => (await pub(n, 'GET', `/form/${formId}/action`)).body?.total === 1);

  const victim = nodes[2]!;
  const acked = new Set<string>();
  let next = 0;
  let killed: Promise<void> | undefined;
  const worker = async () => {
    while (next < TOTAL) {
      const i = next++;
      if (i === TOTAL / 2) killed = victim.kill('SIGKILL');
      const n = nodes[i % 3]!;
      try {
        const res = await fetch(`${n.url}/f/${formId}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ n: String(i) }) });
        await res.arrayBuffer();
        if (res.status === 200) acked.add(String(i));
      } catch { /* the killed node: not acknowledged */ }
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  await killed;
  assert.ok(acked.size >= (TOTAL * 2) / 3, `most posts acknowledged (${acked.size})`);

  const survivors = nodes.slice(0, 2);
  const lists: Map<string, number>[] = [];
  for (const n of survivors) {
    lists.push(await waitFor(`${n.id} lists every acknowledged submission`, async () => {
      const m = await listed(n, formId);
      return [...acked].every((x) => m.has(x)) && m;
    }, 60_000));
  }
  // the survivors agree on everything stored (a post the killed node made durable without answering included)
  await waitFor('the survivors list the same submissions', async () => {
    const [x, y] = await Promise.all(survivors.map((n) => listed(n, formId)));
    lists.splice(0, 2, x!, y!);
    return x!.size === y!.size;
  });
  assert.deepEqual([...lists[0]!.entries()].sort(), [...lists[1]!.entries()].sort());
  const stored = lists[0]!;

  for (const n of survivors) {
    const plan = await pub(n, 'GET', '/plan');
    assert.equal(plan.body.usage.submissions_this_month, stored.size, `${n.id}: usage counts every stored submission`);
  }

  // every stored submission delivered; repeats (a takeover after the kill) carry the same webhook-id
  const byId = () => {
    const m = new Map<string, number>();
    for (const r of received) m.set(r.webhookId, r.sid);
    return m;
  };
  await waitFor('every stored submission delivered', () => byId().size >= stored.size && true, 120_000);
  await new Promise((r) => setTimeout(r, 2_000));
  const unique = byId();
  const subs = [...unique.values()];
  assert.equal(new Set(subs).size, subs.length, 'no submission delivered under two webhook-ids');
  assert.deepEqual(subs.sort((x, y) => x - y), [...stored.values()].sort((x, y) => x - y), 'each stored submission delivered, none missing');
  const repeats = received.length - unique.size;
  console.log(`chaos: ${acked.size} acknowledged, ${stored.size} stored, ${unique.size} delivered, ${repeats} repeats dropped by webhook-id`);
});
