import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { startTestDaemon } from '../helpers/daemon.js';
import { dig, makeService } from '../helpers/dns-tools.js';
import { batchSupport } from '../../runtime/dns/batch-socket.js';
import { DnsMetrics } from '../../runtime/dns/metrics.js';
import { DnsWorkers } from '../../runtime/dns/workers.js';
import { HealthBoardWriter } from '../../runtime/dns/health-board.js';
import { dnsRows } from '../../runtime/dns/worker-feed.js';

// A DNS worker thread that cannot build an apply, or is told to commit a staged apply it does not
// have, must not acknowledge it (it would serve older rows for good): it asks for a resync and
// answers from every row as the main thread serves them (docs/dns.md "Workers").

const batched = batchSupport().available;

/** A UDP port nobody holds right now (the worker's SO_REUSEPORT group is made on it). */
async function freeUdpPort(): Promise<number> {
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  const { port } = s.address();
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

test('a worker told to commit an apply it did not build asks for a resync and then serves the current rows', { skip: batched ? false : 'udp batch addon unavailable (workers need it)' }, async () => {
  const d = await startTestDaemon({ dns: { listenAddr: '127.0.0.1', port: 0, domain: 'resync.test', workers: 1 } as never });
  let workers: DnsWorkers | undefined;
  try {
    await makeService(d, { name: 'one', domain: 'one.resync.test.' }, [{ ipAddress: '192.0.2.1' }]);
    const current = () => ({ rows: dnsRows(d.core.holder.current), revision: d.core.holder.current.revision, serial: 7 });
    const port = await freeUdpPort();
    let resyncs = 0;
    const started = DnsWorkers.start({
      count: 1, log: d.core.log, metrics: new DnsMetrics(), current, onResync: () => { resyncs++; }, answer: () => null,
      init: { config: d.core.config, sequence: new SharedArrayBuffer(4), port, version: Buffer.from('v'), board: new HealthBoardWriter().buffers, ...current() },
    });
    workers = started.workers;
    await started.ready;
    assert.deepEqual((await dig(port, ['one.resync.test', 'A'])).answers, ['192.0.2.1'], 'the worker answers from its rows');

    // a write the worker is not told about: it does not know the name
    await makeService(d, { name: 'two', domain: 'two.resync.test.' }, [{ ipAddress: '192.0.2.2' }]);
    assert.equal((await dig(port, ['two.resync.test', 'A'])).status, 'NXDOMAIN');

    // a commit of a stage it never built: no acknowledgement of it, a resync instead
    workers.commit(workers.beginStage());
    const t0 = Date.now();
    await workers.settled();
    assert.ok(Date.now() - t0 < 1500, `settled by the reset's acknowledgement, not by the wait's 2 s timeout (${Date.now() - t0} ms)`);
    assert.equal(resyncs, 1);
    assert.deepEqual((await dig(port, ['two.resync.test', 'A'])).answers, ['192.0.2.2'], 'after the resync the worker serves every current row');
    assert.deepEqual((await dig(port, ['one.resync.test', 'A'])).answers, ['192.0.2.1']);
    assert.ok(d.logs.lines.some((l) => l.msg === 'dns worker asked for a resync; sending every row'), 'the main thread logs the resync');
  } finally {
    await workers?.close();
    await d.stop();
  }
});
