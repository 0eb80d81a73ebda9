import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_DEMO_BACKENDS, parseDemoBackends } from '../../../runtime/demo/options.js';

test('parseDemoBackends: names in order, IPv4 and bracketed IPv6; bad entries name themselves', () => {
  const rows: { name: string; given: string; want: unknown }[] = [
    { name: 'default', given: DEFAULT_DEMO_BACKENDS, want: [{ name: 'demo-1', host: '127.0.0.10', port: 8081 }, { name: 'demo-2', host: '127.0.0.11', port: 8081 }] },
    { name: 'ipv6 and spaces', given: ' [::1]:9000 , 127.0.0.30:80', want: [{ name: 'demo-1', host: '::1', port: 9000 }, { name: 'demo-2', host: '127.0.0.30', port: 80 }] },
    { name: 'a host name', given: 'localhost:80', want: /"localhost:80" is not IP:port/ },
    { name: 'no port', given: '127.0.0.10', want: /not IP:port/ },
    { name: 'ipv6 without brackets', given: '::1:80', want: /not IP:port/ },
    { name: 'port 0', given: '127.0.0.10:0', want: /port must be 1\.\.65535/ },
    { name: 'port too high', given: '127.0.0.10:65536', want: /port must be 1\.\.65535/ },
    { name: 'twice', given: '127.0.0.10:80,127.0.0.10:80', want: /given twice/ },
    { name: 'empty', given: ' , ', want: /at least one/ },
  ];
  for (const r of rows) {
    if (r.want instanceof RegExp) assert.throws(() => parseDemoBackends(r.given), r.want, r.name);
    else assert.deepEqual(parseDemoBackends(r.given), r.want, r.name);
  }
});
