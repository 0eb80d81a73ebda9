import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import dnsPacket from 'dns-packet';
import { dig, udpExchange } from '../helpers/dns-tools.js';
import { call, spawnGslbd, startNats, stopAllGslbd, stopAllNats, waitFor, type GslbdNode } from '../helpers/nats.js';
import { signRequest, tsigKeyring } from '../../runtime/dns/tsig.js';

// The replay cache of signed RFC 2136 UPDATEs outlives a restart and is shared by the nodes of a
// cluster (docs/dns.md "TSIG", docs/cluster.md "Replay caches"): captured bytes, accepted once,
// are refused after the daemon restarts (SQLite) and on another node (KV SVC_TSIG_REPLAY).

const SECRET = Buffer.from('operator-update-key-of-32-bytes!').toString('base64');
const KEY = tsigKeyring([{ name: 'ops.example.test', algorithm: 'hmac-sha256', secret: SECRET }]).get('ops.example.test.')!;
const DNS = {
  domain: 'example.test',
  axfr: { tsigKeys: [{ name: 'ops.example.test', algorithm: 'hmac-sha256', secret: SECRET }] },
  update: { enabled: true, grants: [{ key: 'ops.example.test', tenant: 'default' }] },
};

after(async () => { await stopAllGslbd(); await stopAllNats(); });

/**
 * A signed UPDATE of one TXT record at `name`: `op` add or delete. Time Signed is set 200 s ahead
 * of now, inside the 300 s fudge, so the bytes verify from 100 s before now until 500 s after:
 * room for a daemon to restart on a loaded machine (the replay cache must outlive exactly that).
 */
function signedUpdate(id: number, op: 'add' | 'delete', name: string, value: string, at: number): Buffer {
  // delete: class ANY, type TXT, no data (RFC 2136 §2.5.2, the whole set)
  const rr = op === 'add'
    ? { name, type: 'TXT', class: 'IN', ttl: 60, data: [value] }
    : { name, type: 'TXT', class: 'ANY', ttl: 0, data: [] };
  return signRequest(dnsPacket.encode({
    type: 'query', id, flags: 5 << 11 /* opcode UPDATE */, questions: [{ name: 'example.test', type: 'SOA', class: 'IN' }], authorities: [rr],
  } as never), KEY, at).msg;
}

const rcodeOf = async (n: GslbdNode, msg: Buffer) => (await udpExchange(n.dnsPort, msg, 10_000)).readUInt16BE(2) & 0xf;
const NOERROR = 0;
const REFUSED = 5;
const txt = async (n: GslbdNode, name: string) => (await dig(n.dnsPort, [name, 'TXT'])).answers;

test('one node: bytes accepted once are refused again, and still after the record is deleted and the daemon restarted', async () => {
  const n = await spawnGslbd('solo', {}, { dns: DNS });
  const at = Math.floor(Date.now() / 1000) + 200;
  const add = signedUpdate(1, 'add', 'replay.example.test', 'captured', at);
  assert.equal(await rcodeOf(n, add), NOERROR);
  assert.deepEqual(await txt(n, 'replay.example.test'), ['"captured"']);
  assert.equal(await rcodeOf(n, add), REFUSED, 'the same bytes again');
  assert.equal(await rcodeOf(n, signedUpdate(2, 'delete', 'replay.example.test', '', at + 1)), NOERROR);
  assert.deepEqual(await txt(n, 'replay.example.test'), []);
  await n.kill('SIGKILL');
  await n.restart();
  await waitFor('DNS answers after the restart', async () => (await dig(n.dnsPort, ['example.test', 'SOA'])).status === 'NOERROR', 60_000, 200);
  assert.equal(await rcodeOf(n, add), REFUSED, 'the same bytes after a restart');
  assert.deepEqual(await txt(n, 'replay.example.test'), [], 'the record was not written again');
  // a new signature is no replay
  assert.equal(await rcodeOf(n, signedUpdate(3, 'add', 'replay.example.test', 'fresh', Math.floor(Date.now() / 1000))), NOERROR);
  assert.deepEqual(await txt(n, 'replay.example.test'), ['"fresh"']);
});

test('two nodes on one nats-server: bytes accepted on node 1 are refused on node 2', async () => {
  const nats = await startNats('replay');
  const state = { nats: { servers: [nats.url] } };
  const [a, b] = await Promise.all([spawnGslbd('a', state, { dns: DNS }), spawnGslbd('b', state, { dns: DNS })]);
  for (const n of [a, b]) await waitFor(`${n.id} connected to nats`, async () => (await call(n.url, 'GET', '/api/v1/cluster')).body?.connected === true, 30_000, 100);
  const add = signedUpdate(10, 'add', 'shared.example.test', 'once', Math.floor(Date.now() / 1000));
  assert.equal(await rcodeOf(a, add), NOERROR, 'node 1 takes it');
  assert.equal(await rcodeOf(b, add), REFUSED, 'node 2 has seen it through the cluster');
  assert.equal(await rcodeOf(a, add), REFUSED, 'and node 1 again');
  assert.deepEqual(await txt(b, 'shared.example.test'), [], 'node 2 wrote nothing (no config sync here: only node 1 holds the record)');
  assert.deepEqual(await txt(a, 'shared.example.test'), ['"once"']);
  // and the other way round, with bytes node 2 sees first
  const other = signedUpdate(11, 'add', 'other.example.test', 'twice', Math.floor(Date.now() / 1000) + 1);
  assert.equal(await rcodeOf(b, other), NOERROR);
  assert.equal(await rcodeOf(a, other), REFUSED);
});
