import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { api, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { dig } from '../helpers/dns-tools.js';
import { issueLicense } from '../../runtime/license/license.js';

// rum.js in a real browser (docs/rum.md "The script"): a page of another origin embeds the script;
// the members' rumUrls are loopback servers answering with different delays; the beacon arrives
// and `dig +subnet` from the browser's subnet then gets the fastest member.

const SYS = randomBytes(24).toString('hex');
const sys = { authorization: `Bearer ${SYS}` };
let d: TestDaemon;
let browser: Browser;
const servers: Server[] = [];
const hits: { member: string; url: string; cookie: string | undefined; at: number }[] = [];

/** A member's measurement endpoint on `ip`, answering after `delayMs`. */
async function rumServer(ip: string, delayMs: number): Promise<string> {
  const s = createServer((req, res) => {
    hits.push({ member: ip, url: req.url ?? '', cookie: req.headers.cookie, at: Date.now() });
    setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' }).end('.'), delayMs);
  });
  await new Promise<void>((r) => s.listen(0, ip, r));
  servers.push(s);
  return `http://${ip}:${(s.address() as AddressInfo).port}/rum`;
}

before(async () => {
  const secret = randomBytes(32).toString('hex');
  const licenseKey = await issueLicense({ tier: 'pro', licensee: 'tests', expiresAt: Math.floor(Date.now() / 1000) + 86_400 }, secret);
  d = await startTestDaemon({ dns: { listenAddr: '127.0.0.1', port: 0, domain: 'example.test' }, license: { secret, licenseKey } } as never, { GSLB_API_KEY: SYS });
  const poolId = (await api(d.url, 'POST', '/api/v1/pools', { name: 'web' }, sys)).body.id as string;
  for (const [ip, delay] of [['127.0.0.31', 400], ['127.0.0.32', 5], ['127.0.0.33', 150]] as const) {
    const rumUrl = await rumServer(ip, delay);
    assert.equal((await api(d.url, 'POST', `/api/v1/pools/${poolId}/members`, { ipAddress: ip, port: 80, rumUrl }, sys)).status, 201);
  }
  assert.equal((await api(d.url, 'POST', '/api/v1/services', { name: 'www', domain: 'www.example.test.', poolId, chain: ['rum'] }, sys)).status, 201);
  const site = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    .end(`<!doctype html><title>shop</title><h1>A shop</h1><script src="${d.url}/rum.js" data-domain="www.example.test" async></script>`));
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  servers.push(site);
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'] });
  (globalThis as { siteUrl?: string }).siteUrl = `http://localhost:${(site.address() as AddressInfo).port}/`;
});
after(async () => {
  await browser?.close();
  for (const s of servers) { s.closeAllConnections(); await new Promise((r) => s.close(r)); }
  await d?.stop();
});

test('a page embedding rum.js measures each member after 2 s, beacons the samples, and dig +subnet then gets the fastest member', async () => {
  const page = await browser.newPage();
  const loaded = Date.now();
  await page.goto((globalThis as { siteUrl?: string }).siteUrl!);
  const deadline = Date.now() + 15_000;
  let status: { members: { ipAddress: string }[] } | undefined;
  while (Date.now() < deadline) {
    status = (await api(d.url, 'GET', '/api/v1/rum/status', undefined, sys)).body;
    if (status!.members.length === 3) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.equal(status?.members.length, 3, `beacon not received: ${JSON.stringify(status)}`);
  await page.close();
  // measured one after the other, each with a cache-busting value, no cookies, not before 2 s
  assert.deepEqual(hits.map((h) => h.member), ['127.0.0.31', '127.0.0.32', '127.0.0.33']);
  for (const h of hits) {
    assert.match(h.url, /^\/rum\?_rum=[0-9a-z]+$/);
    assert.equal(h.cookie, undefined);
    assert.ok(h.at - loaded >= 1900, `measured ${h.at - loaded} ms after load`);
  }
  assert.ok(hits[1]!.at - hits[0]!.at >= 350, 'the second request waits for the first answer');
  const r = await dig(d.ports.dnsPort as number, ['www.example.test', 'A', '+subnet=127.0.0.0/24']);
  assert.deepEqual(r.answers, ['127.0.0.32']);
  const sim = await api(d.url, 'POST', '/api/v1/simulate', { name: 'www.example.test', type: 'A', clientIp: '127.0.0.1' }, sys);
  assert.match(sim.body.steps.at(-1).reason, /^RumData \d+(\.\d)?ms$/);
  assert.deepEqual((await dig(d.ports.dnsPort as number, ['www.example.test', 'A', '+subnet=192.0.2.0/24'])).answers.length, 1, 'another subnet still gets one answer');
});
