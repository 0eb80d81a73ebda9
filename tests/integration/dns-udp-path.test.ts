import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestDaemon } from '../helpers/daemon.js';
import { dig, firstAnswers, makeService } from '../helpers/dns-tools.js';
import { batchSupport } from '../../runtime/dns/batch-socket.js';

// Both UDP paths answer the same way: the batched socket (native/udp-batch, the default when the
// addon loads) and the dgram fallback (forced with GSLBD_DNS_UDP_BATCH=0).
const batched = batchSupport().available;

for (const mode of ['batched', 'dgram'] as const) {
  test(`UDP path ${mode}: answers, ECS, TC then TCP, query log, many queries`, { skip: mode === 'batched' && !batched ? 'udp batch addon unavailable' : false }, async () => {
    const saved = process.env.GSLBD_DNS_UDP_BATCH;
    if (mode === 'dgram') process.env.GSLBD_DNS_UDP_BATCH = '0';
    let d: Awaited<ReturnType<typeof startTestDaemon>> | undefined;
    try {
      d = await startTestDaemon({ dns: { listenAddr: '127.0.0.1', port: 0, domain: 'path.test', queryLog: true, udpPayloadSize: 4096 } as never });
    } finally {
      if (saved === undefined) delete process.env.GSLBD_DNS_UDP_BATCH; else process.env.GSLBD_DNS_UDP_BATCH = saved;
    }
    try {
      assert.equal(d.ports.dnsUdpPath, mode);
      assert.ok(d.logs.lines.some((l) => l.msg === `dns listening (udp path: ${mode})`), 'the active path is logged');
      const port = d.ports.dnsPort as number;
      await makeService(d, { name: 'web', domain: 'www.path.test.', ttl: 60 }, [{ ipAddress: '192.0.2.1' }, { ipAddress: '192.0.2.2' }]);
      await makeService(d, { name: 'big', domain: 'big.path.test.' }, Array.from({ length: 120 }, (_, i) => ({ ipAddress: `10.1.${i >> 8}.${i & 255}` })));

      const a = await dig(port, ['www.path.test', 'A']);
      assert.equal(a.status, 'NOERROR');
      assert.deepEqual([...a.answers].sort(), ['192.0.2.1', '192.0.2.2']);
      const nx = await dig(port, ['nope.path.test', 'A']);
      assert.equal(nx.status, 'NXDOMAIN');

      const ecs = await dig(port, ['www.path.test', 'A', '+subnet=198.51.100.0/24']);
      assert.equal(ecs.status, 'NOERROR');
      assert.match(ecs.ecs ?? '', /^198\.51\.100\.0\/24\/\d+$/);

      const tc = await dig(port, ['big.path.test', 'A', '+ignore', '+bufsize=512']);
      assert.ok(tc.flags.includes('tc'), 'TC over UDP');
      const retried = await dig(port, ['big.path.test', 'A', '+bufsize=512']);
      assert.match(retried.text, /Truncated, retrying in TCP mode/);
      assert.equal(retried.answers.length, 120);

      // Replies are written straight into the send slot (4 KiB): one that fits is sent whole; one
      // that outgrows the slot while it is built is truncated to the question (TC) and still sent.
      const whole = await dig(port, ['big.path.test', 'A', '+ignore', '+bufsize=4096']);
      assert.ok(!whole.flags.includes('tc'), 'about 2 KiB: no TC');
      assert.equal(whole.answers.length, 120);
      await makeService(d, { name: 'huge', domain: 'huge.path.test.' }, Array.from({ length: 260 }, (_, i) => ({ ipAddress: `10.2.${i >> 8}.${i & 255}` })));
      const over = await dig(port, ['huge.path.test', 'A', '+ignore', '+bufsize=4096']);
      assert.equal(over.status, 'NOERROR');
      assert.ok(over.flags.includes('tc'), 'over 4 KiB: TC');
      assert.equal(over.answers.length, 0);
      const after = await dig(port, ['www.path.test', 'A']);
      assert.deepEqual([...after.answers].sort(), ['192.0.2.1', '192.0.2.2'], 'the next reply is whole');

      const line = [...d.logs.lines].reverse().find((l) => l.msg === 'dns query' && l.name === 'www.path.test.');
      assert.ok(line);
      assert.equal(line!.src, '127.0.0.1');

      const answers = await firstAnswers(port, 'www.path.test', 2000, 64);
      assert.equal(answers.length, 2000);
      assert.ok(answers.every((x) => x === '192.0.2.1' || x === '192.0.2.2'));
    } finally {
      await d.stop();
    }
  });
}
