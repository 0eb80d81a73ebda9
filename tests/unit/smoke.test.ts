import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDuration, formatDuration } from '../../runtime/config/duration.js';

test('durations parse like Go durations', () => {
  const rows: [string, number | undefined][] = [['10s', 10000], ['1h', 3600000], ['1m30s', 90000], ['500ms', 500], ['0', 0], ['10', undefined], ['10x', undefined], ['', undefined], ['-1s', undefined]];
  for (const [given, want] of rows) assert.equal(parseDuration(given), want, given);
  assert.equal(formatDuration(90000), '1m30s');
});
