import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

// better-sqlite3 12's objects were node::ObjectWrap from the Node headers; on Node 24.19 and later
// the process aborted ("Assertion failed: (env) != nullptr") when V8 collected a Statement or a
// Database outside a JS context (docs/architecture.md "Node versions"). This frees many of both,
// with forced collections, in a child process of the same Node started with --expose-gc.
const SCRIPT = `
import Database from 'better-sqlite3';
const db = new Database(':memory:');
db.exec('create table t (a integer)');
let sum = 0;
for (let i = 0; i < 200000; i++) {
  sum += db.prepare('select ? + ' + (i % 997) + ' as x').get(i).x;
  if (i % 20000 === 0) globalThis.gc();
}
for (let i = 0; i < 200; i++) { const d = new Database(':memory:'); d.prepare('select 1').get(); if (i % 50 === 0) d.close(); }
globalThis.gc();
await new Promise((r) => setTimeout(r, 10));
globalThis.gc();
console.log('freed', sum > 0, process.version);
`;

test('many prepared statements and databases are collected without aborting the process', () => {
  const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', SCRIPT], { encoding: 'utf8' });
  assert.equal(r.signal, null, `killed by ${r.signal}: ${r.stderr}`);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`^freed true ${process.version.replace(/\./g, '\\.')}$`, 'm'));
});
