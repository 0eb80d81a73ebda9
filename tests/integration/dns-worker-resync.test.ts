import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { startTestDaemon } from '../helpers/daemon.js';
import { dig, makeService } from '../helpers/dns-tools.js';
import { batchSupport } from '../../runtime/dns/batch-socket.js';
import { DnsMetrics } from '../../runtime/dns/metrics.js';
import { DnsWorkers } from '../../runtime/dns/workers.js';
import { HealthBoardWriter } from '../../runtime/dns/health-board.js';
import { IndexImageWriter } from '../../runtime/dns/index-image.js';
import { settlesBeforeHang } from '../helpers/wait.js';

// A DNS worker thread that cannot take an index image, or is told to commit a staged one it does
// not have, must not acknowledge it (it would serve an older state for good): it asks for a resync
// and answers from the whole image as the main thread serves it (docs/dns.md "Workers").

const batched = batchSupport().available;

/** A UDP port nobody holds right now (the worker's SO_REUSEPORT group is made on it). */
async function freeUdpPort(): Promise<number> {
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  const { port } = s.address();
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

test('a worker told to commit an image it never got asks for a resync and then serves the whole current image', { skip: batched ? false : 'udp batch addon unavailable (workers need it)' }, async () => {
  const d = await startTestDaemon({ dns: { listenAddr: '127.0.0.1', port: 0, domain: 'resync.test', workers: 0 } as never });
  let workers: DnsWorkers | undefined;
  try {
    await makeService(d, { name: 'one', domain: 'one.resync.test.' }, [{ ipAddress: '192.0.2.1' }]);
    // the image of the daemon's index as it is now (its own DNS part runs no workers)
    const images = new IndexImageWriter();
    const current = () => {
      const ix = d.core.ports.dnsAnswerer!.index();
      if (!images.unchanged(ix)) images.commit(images.image(ix));
      return images.full();
    };
    const port = await freeUdpPort();
    let resyncs = 0;
    const started = DnsWorkers.start({
      // a settle timeout of ten minutes: only the reset's acknowledgement can end a wait before the ceiling
      count: 1, log: d.core.log, metrics: new DnsMetrics(), current, onResync: () => { resyncs++; }, answer: () => Promise.resolve(null), settleTimeoutMs: 600_000,
      init: { config: d.core.config, sequence: new SharedArrayBuffer(4), port, version: Buffer.from('v'), board: new HealthBoardWriter().buffers, image: current() },
    });
    workers = started.workers;
    await started.ready;
    assert.deepEqual((await dig(port, ['one.resync.test', 'A'])).answers, ['192.0.2.1'], 'the worker answers from the image');

    // a write the worker is not told about: it does not know the name
    await makeService(d, { name: 'two', domain: 'two.resync.test.' }, [{ ipAddress: '192.0.2.2' }]);
    assert.equal((await dig(port, ['two.resync.test', 'A'])).status, 'NXDOMAIN');

    // a commit of a stage it never got: no acknowledgement of it, a resync instead
    workers.commit(99);
    await settlesBeforeHang('the wait for the workers after a commit they cannot take', Promise.resolve(workers.settled()));
    assert.ok(!d.logs.lines.some((l) => l.msg === 'dns workers did not confirm an apply in time'), 'settled by the reset\'s acknowledgement, not by the wait\'s timeout');
    assert.equal(resyncs, 1);
    assert.deepEqual((await dig(port, ['two.resync.test', 'A'])).answers, ['192.0.2.2'], 'after the resync the worker serves the whole current image');
    assert.deepEqual((await dig(port, ['one.resync.test', 'A'])).answers, ['192.0.2.1']);
    assert.ok(d.logs.lines.some((l) => l.msg === 'dns worker asked for a resync; sending the whole index image'), 'the main thread logs the resync');
  } finally {
    await workers?.close();
    await d.stop();
  }
});
