import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import dnsPacket from 'dns-packet';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { dig, makeService } from '../helpers/dns-tools.js';
import { planCreate } from '../../core/plan/delta.js';
import type { Answerer } from '../../runtime/dns/answer.js';
import type { ServiceRow } from '../../core/model/types.js';
import { serialGreater } from '../../runtime/dns/zone-serial.js';

const start = (path: string) => startTestDaemon({ database: { path }, dns: { listenAddr: '127.0.0.1', port: 0, domain: 'example.test' } as never });

/** The serial in the SOA dig gets for the apex. */
async function digSerial(d: TestDaemon): Promise<number> {
  const r = await dig(d.ports.dnsPort as number, ['example.test', 'SOA']);
  assert.equal(r.status, 'NOERROR');
  return Number(r.answers[0]!.split(' ')[2]);
}

/** The serial the answer path puts in an SOA reply right now (the same code a UDP query runs, without waiting a turn). */
function answerSerial(d: TestDaemon): number {
  const q = dnsPacket.encode({ type: 'query', id: 1, questions: [{ name: 'example.test', type: 'SOA' }] });
  const r = dnsPacket.decode((d.ports.dnsAnswerer as Answerer).handle(q, '127.0.0.1', true, false) as Buffer);
  return (r.answers![0] as unknown as { data: { serial: number } }).data.serial;
}

const service = (id: string): ServiceRow => ({
  kind: 'service', id, name: id, domain: `${id}.example.test.`, algorithm: 'round-robin', ttl: 60, poolId: null, chain: [],
  whenAllUnhealthy: 'all', asnRules: [], origin: 'api', revision: `api:${id}`, tenantId: 'default',
});

test('two changes within one second get two increasing serials; a restart keeps the serial and the next change goes higher', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-serial-'));
  const path = join(dir, 'gslbd.db');
  let d = await start(path);
  try {
    const s0 = await digSerial(d);
    assert.equal(s0, 1, 'a new database serves serial 1');
    // two applies in the same turn of the event loop with the clock held still: the same second,
    // and the same millisecond, however slow the machine
    const realNow = Date.now;
    const frozen = realNow();
    Date.now = () => frozen;
    let s1: number, s2: number;
    try {
      d.core.apply(planCreate(d.core.holder.current, service('one'), 'api:one'));
      s1 = answerSerial(d);
      d.core.apply(planCreate(d.core.holder.current, service('two'), 'api:two'));
      s2 = answerSerial(d);
    } finally {
      Date.now = realNow;
    }
    assert.ok(serialGreater(s1, s0) && serialGreater(s2, s1), `${s0} < ${s1} < ${s2}`);
    assert.equal(await digSerial(d), s2, 'what dig sees over the wire');
    // and over REST: each write is its own plan
    await makeService(d, { name: 'web', domain: 'www.example.test.' }, [{ ipAddress: '192.0.2.1' }]);
    const s3 = await digSerial(d);
    assert.ok(serialGreater(s3, s2), `${s3} > ${s2}`);
    // a write that changes no DNS row (a pool alone) keeps it
    const pool = await fetch(`${d.url}/api/v1/pools`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'lonely' }) });
    assert.equal(pool.status, 201);
    assert.equal(await digSerial(d), s3, 'no DNS change, no new serial');
    await d.stop();
    d = await start(path);
    assert.equal(await digSerial(d), s3, 'kept across the restart');
    d.core.apply(planCreate(d.core.holder.current, service('three'), 'api:three'));
    const s4 = await digSerial(d);
    assert.ok(serialGreater(s4, s3), `${s4} > ${s3} after the restart`);
  } finally {
    await d.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
