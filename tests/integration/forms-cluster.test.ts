/**
 * Forms in a cluster (docs/forms.md "In a cluster"): three gslbd processes, each on its own server
 * of a three-server JetStream cluster. A submission acknowledged by any node is listed by every
 * node under the same id; two nodes claiming one submission at once give one 200 and one 409; a
 * file uploaded on one node downloads from another; each delivery reaches the receiver once,
 * whichever nodes hold it; usage counts every node's submissions.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, spawnGslbd, startNatsCluster, stopAllGslbd, stopAllNats, waitFor, type GslbdNode } from '../helpers/nats.js';
import { Recorder } from '../helpers/recorder.js';

const KEY = 'k'.repeat(64);
const ENV = { GSLB_API_KEY: KEY, GSLB_SECRET_KEY: '5'.repeat(64), GSLB_STATE_CATCHUP: '1s' };
const SYS = { authorization: `Bearer ${KEY}` };
const STATE = { enableConfigSync: true, heartbeatInterval: '300ms', heartbeatTTL: '1500ms', config: { applyTimeout: '3s' } };
const FORMS = {
  defaultTier: 'pro',
  rateLimits: { perIpPerMinute: 1_000_000, perKeyPerMinute: 1_000_000 },
  deliveries: { allowPrivateTargets: ['127.0.0.0/8'], pollIntervalMs: 100, timeoutMs: 2_000, retryDelaysMs: [200, 500, 1_000, 2_000], digestCheckMs: 500 },
  cluster: { leaseMs: 3_000 },
};

let nodes: GslbdNode[];
let formKey: string;
let formId: string;
/** a form that reminds after a minute, with the submission posted when the tests began */
let reminding: { id: string; sid?: number; postedAt: number };
const hook = new Recorder();

const pub = (n: GslbdNode, method: string, path: string, body?: unknown) => call(n.url, method, `/public/v1${path}`, body, { authorization: `Bearer ${formKey}` });

/** Posts fields as JSON to a node's public endpoint; returns the status. */
async function submit(n: GslbdNode, form: string, fields: Record<string, unknown>): Promise<number> {
  const res = await fetch(`${n.url}/f/${form}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(fields) });
  await res.arrayBuffer();
  return res.status;
}

/** Every submission of a form a node lists (all pages, spam included): `n` → id. */
async function listed(n: GslbdNode, form: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (let page = 1; ; page++) {
    const r = await pub(n, 'GET', `/form/${form}/submission?limit=100&page=${page}&getSpam=true&order=asc&sort=id`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    for (const s of r.body.data as { id: number; data: { n: string } }[]) out.set(s.data.n, s.id);
    if (page * 100 >= r.body.total) return out;
  }
}

/** A form with a webhook action to the recorder, made on node a and seen by every node. */
async function makeForm(name: string): Promise<string> {
  const f = await pub(nodes[0]!, 'POST', '/form', { name });
  assert.equal(f.status, 201, JSON.stringify(f.body));
  const a = await pub(nodes[0]!, 'POST', `/form/${f.body.id}/action`, { form_id: f.body.id, type: 'webhook', config: { url: `${await hookURL()}/${name}` } });
  assert.equal(a.status, 201, JSON.stringify(a.body));
  for (const n of nodes) await waitFor(`${n.id} has form ${name} and its action`, async () => (await pub(n, 'GET', `/form/${f.body.id}/action`)).body?.total === 1);
  return f.body.id as string;
}

let hookBase: string | undefined;
const hookURL = async () => (hookBase ??= await hook.start());

before(async () => {
  const servers = await startNatsCluster(3, 'fc');
  nodes = await Promise.all(['a', 'b', 'c'].map((id, i) => spawnGslbd(id, { ...STATE, nats: { servers: [servers[i]!.url] } }, { forms: FORMS }, ENV)));
  for (const n of nodes) await waitFor(`${n.id} sees the others`, async () => (await call(n.url, 'GET', '/api/v1/cluster', undefined, SYS)).body?.liveNodes?.length === 3, 30_000);
  const k = await call(nodes[0]!.url, 'POST', '/api/v1/apikeys?tenant=default', { name: 'cluster test', scopes: ['forms:read', 'forms:write', 'submissions:read'] }, SYS);
  assert.equal(k.status, 201, JSON.stringify(k.body));
  formKey = k.body.key;
  for (const n of nodes) await waitFor(`${n.id} knows the key`, async () => (await pub(n, 'GET', '/form')).status === 200);
  formId = await makeForm('contact');
  // the reminder is due a minute after the post: posted now, checked by the last test
  const r = await pub(nodes[0]!, 'POST', '/form', { name: 'reminders', reminder_after_minutes: 1 });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const ra = await pub(nodes[0]!, 'POST', `/form/${r.body.id}/action`, { form_id: r.body.id, type: 'webhook', config: { url: `${await hookURL()}/reminders`, events: ['submission.reminder'] } });
  assert.equal(ra.status, 201, JSON.stringify(ra.body));
  for (const n of nodes) await waitFor(`${n.id} has the reminders form`, async () => (await pub(n, 'GET', `/form/${r.body.id}/action`)).body?.total === 1);
  reminding = { id: r.body.id as string, postedAt: Date.now() };
  assert.equal(await submit(nodes[1]!, reminding.id, { n: 'forgotten' }), 200);
});

after(async () => {
  await stopAllGslbd();
  await stopAllNats();
  await hook.stop();
});

test('a submission acknowledged by any node is listed by every node under the same id; usage counts them all', async () => {
  const statuses = await Promise.all(Array.from({ length: 60 }, (_, i) => submit(nodes[i % 3]!, formId, { n: String(i) })));
  assert.deepEqual(new Set(statuses), new Set([200]));
  const want = Array.from({ length: 60 }, (_, i) => String(i)).sort();
  const seen: Map<string, number>[] = [];
  for (const n of nodes) {
    seen.push(await waitFor(`${n.id} lists 60 submissions`, async () => { const m = await listed(n, formId); return m.size === 60 && m; }));
  }
  for (const m of seen) assert.deepEqual([...m.keys()].sort(), want);
  for (const m of seen.slice(1)) assert.deepEqual([...m.entries()].sort(), [...seen[0]!.entries()].sort(), 'the same id on every node');
  for (const n of nodes) {
    const plan = await pub(n, 'GET', '/plan');
    // the 60, and the one of the reminders form posted in `before`
    assert.equal(plan.body.usage.submissions_this_month, 61, `${n.id} counts every node's submissions`);
  }
});

test('each delivery reaches the receiver once, whichever node sends it; webhook-id is the same key on every node', async () => {
  await waitFor('60 deliveries', () => hook.requests.filter((r) => r.url === '/contact').length >= 60 && true);
  // a little longer: a second sender would show up now
  await new Promise((r) => setTimeout(r, 1_500));
  const reqs = hook.requests.filter((r) => r.url === '/contact');
  const ids = reqs.map((r) => r.headers['webhook-id'] as string);
  assert.equal(new Set(ids).size, ids.length, 'no webhook-id twice');
  assert.equal(reqs.length, 60);
  const subs = new Set(reqs.map((r) => r.json.data.submission.id as number));
  assert.equal(subs.size, 60);
  const log = await pub(nodes[2]!, 'GET', `/action/${(await pub(nodes[2]!, 'GET', `/form/${formId}/action`)).body.data[0].id}/deliveries?state=sent&limit=1`);
  await waitFor('node c shows every delivery sent', async () => (await pub(nodes[2]!, 'GET', `/action/${(await pub(nodes[2]!, 'GET', `/form/${formId}/action`)).body.data[0].id}/deliveries?state=sent&limit=1`)).body.total === 60);
  assert.equal(log.status, 200);
});

test('two nodes claiming one submission at once: one 200, one 409; every node shows the winner', async () => {
  const m = await listed(nodes[0]!, formId);
  const sid = m.get('7')!;
  const [rb, rc] = await Promise.all([
    pub(nodes[1]!, 'POST', `/form/${formId}/submission/${sid}/claim`, { form_id: formId, submission_id: sid, by: 'bea' }),
    pub(nodes[2]!, 'POST', `/form/${formId}/submission/${sid}/claim`, { form_id: formId, submission_id: sid, by: 'cai' }),
  ]);
  assert.deepEqual([rb.status, rc.status].sort(), [200, 409], JSON.stringify([rb.body, rc.body]));
  const winner = rb.status === 200 ? 'bea' : 'cai';
  const loser = rb.status === 200 ? rc : rb;
  assert.match(loser.body.message, new RegExp(`claimed by ${winner} at `));
  for (const n of nodes) {
    await waitFor(`${n.id} shows the claim`, async () => {
      const r = await pub(n, 'GET', `/form/${formId}/submission?claimed=true`);
      return r.body.total === 1 && r.body.data[0].claimed_by === winner && r.body.data[0].id === sid;
    });
  }
  // a third claim, on the node that won, is 409 too
  const again = await pub(nodes[0]!, 'POST', `/form/${formId}/submission/${sid}/claim`, { form_id: formId, submission_id: sid });
  assert.equal(again.status, 409);
});

test('a file uploaded on one node downloads from another', async () => {
  const fd = new FormData();
  fd.append('n', 'with-file');
  fd.append('cv', new Blob([new Uint8Array([1, 2, 3, 250, 251, 252])], { type: 'application/pdf' }), 'cv.pdf');
  const res = await fetch(`${nodes[0]!.url}/f/${formId}`, { method: 'POST', body: fd, headers: { accept: 'application/json' } });
  assert.equal(res.status, 200, await res.text());
  const sid = await waitFor('node c lists it', async () => (await listed(nodes[2]!, formId)).get('with-file'));
  const dl = await fetch(`${nodes[2]!.url}/public/v1/form/${formId}/submission/${sid}/file/0`, { headers: { authorization: `Bearer ${formKey}` } });
  assert.equal(dl.status, 200);
  assert.deepEqual([...new Uint8Array(await dl.arrayBuffer())], [1, 2, 3, 250, 251, 252]);
});

test("a key's last use on one node is shown by every node", async () => {
  const k = await call(nodes[0]!.url, 'POST', '/api/v1/apikeys?tenant=default', { name: 'used on a only', scopes: ['forms:read'] }, SYS);
  assert.equal(k.status, 201, JSON.stringify(k.body));
  await waitFor('node a knows the new key', async () => (await call(nodes[0]!.url, 'GET', '/public/v1/form', undefined, { authorization: `Bearer ${k.body.key}` })).status === 200);
  for (const n of nodes.slice(1)) {
    await waitFor(`${n.id} shows its last use`, async () => {
      const list = (await call(n.url, 'GET', '/api/v1/apikeys?tenant=default', undefined, SYS)).body as { name: string; lastUsedAt: number | null }[] | { data: { name: string; lastUsedAt: number | null }[] };
      const rows = Array.isArray(list) ? list : list.data;
      return rows.find((r) => r.name === 'used on a only')?.lastUsedAt != null;
    });
  }
});

test('a claim on one node reaches the subscribers of submission.claimed once, from one node', async () => {
  const f = await pub(nodes[0]!, 'POST', '/form', { name: 'claims' });
  assert.equal(f.status, 201);
  const id = f.body.id as string;
  const a = await pub(nodes[0]!, 'POST', `/form/${id}/action`, { form_id: id, type: 'webhook', config: { url: `${await hookURL()}/claims`, events: ['submission.claimed'] } });
  assert.equal(a.status, 201, JSON.stringify(a.body));
  for (const n of nodes) await waitFor(`${n.id} has the claims form`, async () => (await pub(n, 'GET', `/form/${id}/action`)).body?.total === 1);
  assert.equal(await submit(nodes[0]!, id, { n: 'to claim' }), 200);
  const sid = await waitFor('node c lists it', async () => (await listed(nodes[2]!, id)).get('to claim'));
  assert.equal((await pub(nodes[2]!, 'POST', `/form/${id}/submission/${sid}/claim`, { form_id: id, submission_id: sid, by: 'cai' })).status, 200);
  await waitFor('the claim delivered', () => hook.requests.some((r) => r.url === '/claims') && true);
  await new Promise((r) => setTimeout(r, 1_500)); // a second sender would show up now
  const got = hook.requests.filter((r) => r.url === '/claims');
  assert.equal(got.length, 1);
  assert.equal(got[0]!.json.type, 'submission.claimed');
  assert.equal(got[0]!.json.data.submission.claimed_by, 'cai');
  assert.match(got[0]!.headers['webhook-id'] as string, new RegExp(`^dlv_\\d+\\.${sid}\\.${a.body.id}$`), 'the key every node gives the delivery');
});

test('a reminder of an unclaimed submission is sent once per cluster (the lease holder queues it on every node)', async () => {
  const sid = await waitFor('node a lists the forgotten submission', async () => (await listed(nodes[0]!, reminding.id)).get('forgotten'));
  // due a minute after the post; the holder of the scheduled-runs lease checks every 500 ms
  await waitFor('the reminder delivered', () => hook.requests.some((r) => r.url === '/reminders') && true, 120_000);
  await new Promise((r) => setTimeout(r, 2_000)); // another node's reminder would show up now
  const got = hook.requests.filter((r) => r.url === '/reminders');
  assert.equal(got.length, 1, 'one reminder in the cluster');
  assert.equal(got[0]!.json.type, 'submission.reminder');
  assert.equal(got[0]!.json.data.submission.id, sid);
  assert.ok(got[0]!.at - reminding.postedAt >= 59_000, 'not before its minute');
});
