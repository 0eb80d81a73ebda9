import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ALERT_RETRY_DELAYS_MS } from '../../../runtime/alerts/dispatcher.js';
import { parseRetryDelays } from '../../../runtime/alerts/retry-schedule.js';

test('the specified schedule: three retries after the first attempt, 2 s, 4 s, 8 s', () => {
  assert.deepEqual(ALERT_RETRY_DELAYS_MS, [2000, 4000, 8000]);
});

test('GSLBD_ALERT_RETRY_DELAYS_MS values', () => {
  const rows: { name: string; given: string; want: readonly number[] | RegExp }[] = [
    { name: 'scaled schedule', given: '100,200,400', want: [100, 200, 400] },
    { name: 'spaces allowed', given: ' 100 , 200 ', want: [100, 200] },
    { name: 'no retries', given: '0', want: [0] },
    { name: 'unit suffix', given: '2s,4s', want: /"2s" is not a whole number/ },
    { name: 'negative', given: '100,-1', want: /"-1" is not a whole number/ },
    { name: 'empty entry', given: '100,,200', want: /"" is not a whole number/ },
    { name: 'seconds for milliseconds', given: '2000000000', want: /more than one hour/ },
    { name: 'too many retries', given: Array(11).fill('1').join(','), want: /at most 10 retries/ },
  ];
  for (const row of rows) {
    const got = parseRetryDelays(row.given);
    if (row.want instanceof RegExp) assert.match(String(got), row.want, row.name);
    else assert.deepEqual(got, row.want, row.name);
  }
});
