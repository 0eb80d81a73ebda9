import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { EXIT_UNREACHABLE, processRuns, waitReady } from '../../../cli/wait.js';
import { freePort } from '../../helpers/proc.js';

test('wait --pid: a daemon that has exited ends the wait at once, not at the timeout', async () => {
  const child = spawn(process.execPath, ['-e', 'process.exit(3)']);
  await new Promise((r) => child.once('exit', r));
  assert.equal(processRuns(child.pid!), false);
  // ten minutes: only a wait that ignored the exited process would reach it (the runner's limit comes first)
  const r = await waitReady(`http://127.0.0.1:${await freePort()}`, 600_000, child.pid!);
  assert.equal(r.code, EXIT_UNREACHABLE);
  assert.equal(r.last.reached, false);
  assert.match(r.last.reached ? '' : r.last.error, new RegExp(`process ${child.pid} has exited`));
});

test('wait --pid: a running process keeps the wait going until the timeout', async () => {
  assert.equal(processRuns(process.pid), true);
  const r = await waitReady(`http://127.0.0.1:${await freePort()}`, 300, process.pid);
  assert.equal(r.code, EXIT_UNREACHABLE);
  assert.equal(r.last.reached, false, 'nothing listens there');
});
