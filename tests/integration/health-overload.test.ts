import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { HealthScheduler, type ProbeRecord } from '../../runtime/health/scheduler.js';
import { httpChecker } from '../../runtime/health/checkers/http.js';
import type { CheckerSet } from '../../runtime/health/checkers/index.js';
import type { Checker } from '../../runtime/health/types.js';
import { HEALTHCHECK_DEFAULTS } from '../../core/model/normalize.js';
import { checkKeyOf } from '../../runtime/health/targets.js';
import { waitUntil } from '../helpers/wait.js';

/** Busy-waits `ms`: the daemon's event loop doing other work. */
const block = (ms: number) => { const end = Date.now() + ms; while (Date.now() < end) { /* busy */ } };

test('scheduler: a response that arrived while the event loop was blocked past the deadline counts as a success', async (t) => {
  // The member runs in another process, so it answers (after 20 ms) while this one is blocked.
  const child = spawn(process.execPath, ['-e',
    "require('http').createServer((q,s)=>setTimeout(()=>s.end('ok'),20)).listen(0,'127.0.0.1',function(){console.log(this.address().port)})"],
  { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => { child.kill('SIGKILL'); });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (d) => resolve(Number(String(d).trim())));
    child.once('exit', (code) => reject(new Error(`member exited ${code}`)));
  });
  // 5 ms after the probe starts, block the loop for 300 ms from the check phase, so the next
  // iteration begins with the probe's deadline (30 ms) long due and its response already in the
  // socket buffer.
  const stalling: Checker = {
    check(target, signal) {
      setTimeout(() => setImmediate(() => block(300)), 5);
      return httpChecker.check(target, signal);
    },
  };
  const results: ProbeRecord[] = [];
  const s = new HealthScheduler({ checkers: { http: stalling } as unknown as CheckerSet, random: () => 0, onResult: (r) => results.push({ ...r, result: { ...r.result } }) });
  t.after(() => s.stop());
  const check = { ...HEALTHCHECK_DEFAULTS, type: 'http' as const, port, intervalMs: 60_000, timeoutMs: 30 };
  s.sync(new Map([['p|127.0.0.1', { key: 'p|127.0.0.1', poolId: 'p', ip: '127.0.0.1', port, check, checkKey: checkKeyOf(check), checkId: 'hc' }]]));
  await waitUntil('the check\'s result', () => results.length > 0);
  assert.equal(results.length, 1);
  assert.ok(results[0]!.finishedAt - results[0]!.startedAt >= 290, 'the loop really was blocked past the deadline');
  assert.equal(results[0]!.result.ok, true, `got ${results[0]!.result.detail}`);
});
