import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, startTestDaemon } from '../helpers/daemon.js';
import { startHttpMember, stopHttpMember } from '../helpers/http-member.js';
import { freePort, spawnEntry, waitFor } from '../helpers/proc.js';
import { startBird } from '../helpers/bird.js';
import { WAIT_CEILING_MS } from '../helpers/wait.js';

const NODE = '203.0.113.0/24';
const WEB_ANY = '198.51.100.0/24';
const WEB_ALL = '198.51.101.0/24';
const GHOST = '192.0.2.128/25';
const INTERVAL_MS = 300;
const TIMEOUT_MS = 200;
/**
 * What a flip should take to reach BIRD: interval + timeout + 1 s. The times are printed, not
 * held to it (a loaded machine is no failure); the negative check below waits this long.
 */
const FLIP_BOUND_MS = INTERVAL_MS + TIMEOUT_MS + 1000;
const took: number[] = [];

test('BIRD (4-byte ASN, eBGP) learns node and pool prefixes, follows member health, and loses every route on shutdown', async (t) => {
  const memberPort = await freePort();
  let a: Server | undefined = await startHttpMember('127.0.0.21', memberPort);
  let b: Server | undefined = await startHttpMember('127.0.0.22', memberPort);
  const birdPort = await freePort();
  const gslbPort = await freePort();
  const bird = await startBird({ asn: 4200000001, port: birdPort, peerAsn: 65010, peerPort: gslbPort });
  const d = await startTestDaemon({
    bgp: {
      enabled: true, localASN: 65010, routerID: '192.0.2.1', listenAddr: '127.0.0.1', listenPort: gslbPort, holdTime: '9s', keepAliveTime: '3s',
      peers: [{ remoteASN: 4200000001, remoteAddr: '127.0.0.1', remotePort: birdPort }],
      nodePrefixes: [NODE],
      poolPrefixes: [
        { poolID: 'web', prefixes: [WEB_ANY] },
        { poolID: 'web', prefixes: [WEB_ALL], withdrawThreshold: 1 },
        { poolID: 'ghost', prefixes: [GHOST] },
      ],
    },
  } as never);
  let stopped = false;
  t.after(async () => {
    if (!stopped) await d.stop().catch(() => undefined);
    await bird.dispose();
    await stopHttpMember(a);
    await stopHttpMember(b);
  });

  // the session comes up and BIRD holds the node prefix; the pools do not exist yet
  await waitFor(() => bird.routes().includes(NODE), 15_000).catch((e) => { throw new Error(`${String(e)}\n${bird.protocol()}\n${bird.log()}`); });
  assert.deepEqual(bird.routes(), [NODE]);
  assert.match(bird.protocol(), /Established/);
  assert.match(bird.routesAll(), /BGP\.as_path: 65010\b/);
  assert.match(bird.routesAll(), /BGP\.next_hop: 127\.0\.0\.1/);
  assert.match(bird.routesAll(), /BGP\.origin: IGP/);
  assert.ok(d.logs.lines.some((l) => l.msg === 'bgp pool prefixes withdrawn: no such pool' && l.poolID === 'ghost'), 'a missing pool is a warning');

  // the pool appears with two healthy members: both of its entries are announced
  const pool = (await api(d.url, 'POST', '/api/v1/pools', { name: 'web' })).body as { id: string };
  const members: { id: string }[] = [];
  for (const ip of ['127.0.0.21', '127.0.0.22']) members.push((await api(d.url, 'POST', `/api/v1/pools/${pool.id}/members`, { ipAddress: ip, port: memberPort })).body);
  assert.equal((await api(d.url, 'PUT', `/api/v1/pools/${pool.id}/healthcheck`, { type: 'http', port: memberPort, httpPath: '/', intervalMs: INTERVAL_MS, timeoutMs: TIMEOUT_MS })).status, 200);
  await waitFor(() => bird.routes().length === 3, WAIT_CEILING_MS, 50, 'three routes in BIRD', () => bird.routes());
  assert.deepEqual(bird.routes(), [WEB_ANY, WEB_ALL, NODE].sort());

  // one member down: the entry that needs every member (threshold 1) is withdrawn, the other stays
  await stopHttpMember(b); b = undefined;
  let since = Date.now();
  await waitFor(() => !bird.routes().includes(WEB_ALL), WAIT_CEILING_MS, 20, 'BIRD to follow the flip', () => bird.routes());
  took.push(Date.now() - since);
  assert.deepEqual(bird.routes(), [WEB_ANY, NODE].sort());

  // the last member down: the pool's routes are gone, the node prefix stays
  await stopHttpMember(a); a = undefined;
  since = Date.now();
  await waitFor(() => !bird.routes().includes(WEB_ANY), WAIT_CEILING_MS, 20, 'BIRD to follow the flip', () => bird.routes());
  took.push(Date.now() - since);
  assert.deepEqual(bird.routes(), [NODE]);

  const status = (await api(d.url, 'GET', '/api/v1/bgp')).body;
  assert.equal(status.peers[0].state, 'Established');
  assert.equal(status.peers[0].fourOctetAs, true);
  assert.equal(status.peers[0].remoteRouterID, '192.0.2.250');
  assert.deepEqual([status.peers[0].holdTime, status.peers[0].keepAliveTime], [9, 3]);
  assert.deepEqual(status.peers[0].prefixesAnnounced, [NODE]);
  assert.deepEqual(status.pools.map((p: { reason: string; healthyMembers: number; enabledMembers: number }) => [p.reason, p.healthyMembers, p.enabledMembers]),
    [['NoHealthyMember', 0, 2], ['NoHealthyMember', 0, 2], ['PoolNotFound', 0, 0]]);

  // members back: re-announced
  a = await startHttpMember('127.0.0.21', memberPort);
  b = await startHttpMember('127.0.0.22', memberPort);
  since = Date.now();
  await waitFor(() => bird.routes().length === 3, WAIT_CEILING_MS, 20, 'BIRD to follow the flip', () => bird.routes());
  took.push(Date.now() - since);
  console.log(`# flips reached BIRD after ${took.join(', ')} ms (interval + timeout + 1 s = ${FLIP_BOUND_MS} ms)`);

  // only enabled members count: with the second member disabled, its failure withdraws nothing
  assert.equal((await api(d.url, 'PUT', `/api/v1/members/${members[1]!.id}`, { enabled: false })).status, 200);
  await stopHttpMember(b); b = undefined;
  await new Promise((r) => setTimeout(r, FLIP_BOUND_MS));
  assert.deepEqual(bird.routes(), [WEB_ANY, WEB_ALL, NODE].sort());
  assert.deepEqual((await api(d.url, 'GET', '/api/v1/bgp')).body.pools[1], {
    poolID: 'web', poolId: pool.id, prefixes: [WEB_ALL], withdrawThreshold: 1, enabledMembers: 1, healthyMembers: 1, announced: true, reason: 'Healthy',
  });

  const metrics = await d.core.metrics.metrics();
  assert.match(metrics, /gslbd_bgp_session_state\{peer="127\.0\.0\.1"[^}]*\} 5/);
  assert.match(metrics, /gslbd_bgp_prefixes_announced\{peer="127\.0\.0\.1"[^}]*\} 3/);
  assert.match(metrics, /gslbd_bgp_updates_sent_total\{peer="127\.0\.0\.1"[^}]*\} [1-9]/);

  // graceful shutdown: every prefix withdrawn, then Cease; BIRD holds nothing once close returns
  stopped = true;
  await d.stop();
  await waitFor(() => bird.routes().length === 0, WAIT_CEILING_MS, 50, 'BIRD to hold no route', () => bird.routes());
  assert.match(bird.log(), /Received: Administrative shutdown/);
  const last = d.logs.lines.filter((l) => l.msg === 'bgp update sent').at(-1)!;
  assert.deepEqual([...(last.withdrawn as string[])].sort(), [WEB_ANY, WEB_ALL, NODE].sort(), 'the withdrawals went out before the Cease');
});

test('iBGP with a 4-byte ASN: a restarted BIRD gets the routes back, and SIGTERM of gslbd withdraws them before it exits', async (t) => {
  const birdPort = await freePort();
  const gslbPort = await freePort();
  const asn = 4200000002;
  const bird = await startBird({ asn, port: birdPort, peerAsn: asn, peerPort: gslbPort });
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-bgp-'));
  writeFileSync(join(dir, 'config.yaml'), `node: {id: bgp-node}
database: {path: ${join(dir, 'db.sqlite')}}
dns: {listenAddr: 127.0.0.1, port: ${await freePort()}}
logging: {format: json, level: info}
bgp:
  enabled: true
  localASN: ${asn}
  routerID: 192.0.2.2
  listenAddr: 127.0.0.1
  listenPort: ${gslbPort}
  holdTime: 9s
  keepAliveTime: 3s
  peers: [{remoteASN: ${asn}, remoteAddr: 127.0.0.1, remotePort: ${birdPort}}]
  nodePrefixes: [${NODE}, 192.0.2.64/26]
`);
  const p = spawnEntry('gslbd', ['--config', join(dir, 'config.yaml')]);
  let out = '';
  p.stdout!.on('data', (c) => { out += c; });
  p.stderr!.on('data', (c) => { out += c; });
  t.after(async () => {
    if (p.exitCode === null && p.signalCode === null) { p.kill('SIGKILL'); await new Promise((r) => p.once('exit', r)); }
    await bird.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  await waitFor(() => bird.routes().length === 2, 20_000).catch((e) => { throw new Error(`${String(e)}\n${out}\n${bird.log()}`); });
  const all = bird.routesAll();
  assert.match(all, /BGP\.local_pref: 100/);
  assert.match(all, /BGP\.as_path: *\n/, 'an empty AS_PATH to an iBGP peer');

  // BIRD goes away and comes back: the session is re-established and the routes return
  await bird.stop();
  await bird.restart();
  await waitFor(() => bird.routes().length === 2, 15_000).catch((e) => { throw new Error(`${String(e)}\n${bird.protocol()}`); });

  // SIGTERM: withdrawals and Cease before the process exits
  const exited = new Promise<number | null>((r) => p.once('exit', (code) => r(code)));
  p.kill('SIGTERM');
  assert.equal(await exited, 0);
  await waitFor(() => bird.routes().length === 0, WAIT_CEILING_MS, 50, 'BIRD to hold no route', () => bird.routes());
  assert.match(bird.log(), /Received: Administrative shutdown/);
  assert.match(out, /"announced":\[\],"withdrawn":\["192\.0\.2\.64\/26","203\.0\.113\.0\/24"\],"msg":"bgp update sent"/);
});
