import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfigText } from '../../../runtime/config/load.js';
import { ValidationError } from '../../../runtime/errors.js';

/** The problems a config text gives, as the startup lines `file:line:col: key = value: rule (rule-id)`. */
function problemsOf(yaml: string): string[] {
  try {
    parseConfigText(`node: {id: n1}\n${yaml}\n`);
    return [];
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    return err.message.split('\n').slice(1).map((l) => l.trim().replace(/^- /, ''));
  }
}

const ENABLED = 'enabled: true, localASN: 65000, routerID: 192.0.2.1';

// The `bgp` rules (gslb-config-auth.md §2, docs/bgp.md "Configuration"): each row a bad block and
// the line it must give, on the line of the offending value.
const BAD: { name: string; yaml: string; want: RegExp }[] = [
  { name: 'localASN required when enabled', yaml: 'bgp: {enabled: true, routerID: 192.0.2.1}', want: /^config\.yaml:2: bgp\.localASN = \(unset\): required and non-zero when bgp\.enabled is true/ },
  { name: 'localASN AS_TRANS', yaml: 'bgp: {enabled: true, localASN: 23456, routerID: 192.0.2.1}', want: /bgp\.localASN = 23456: must not be AS_TRANS \(23456, RFC 6793\)/ },
  { name: 'localASN above 32 bits', yaml: 'bgp: {enabled: true, localASN: 4294967296, routerID: 192.0.2.1}', want: /bgp\.localASN = 4294967296: must be <= 4294967295/ },
  { name: 'routerID not IPv4', yaml: 'bgp: {enabled: true, localASN: 65000, routerID: "2001:db8::1"}', want: /bgp\.routerID = "2001:db8::1": must be a valid IPv4 address/ },
  { name: 'peer remoteASN AS_TRANS', yaml: `bgp: {${ENABLED}, peers: [{remoteASN: 23456, remoteAddr: 192.0.2.2}]}`, want: /bgp\.peers\.0\.remoteASN = 23456: must not be AS_TRANS/ },
  { name: 'peer address twice', yaml: `bgp: {${ENABLED}, peers: [{remoteASN: 65001, remoteAddr: 192.0.2.2}, {remoteASN: 65002, remoteAddr: 192.0.2.2}]}`, want: /bgp\.peers\.1\.remoteAddr = "192\.0\.2\.2": is already the address of bgp\.peers\[0\]/ },
  { name: 'peer remotePort range', yaml: `bgp: {${ENABLED}, peers: [{remoteASN: 65001, remoteAddr: 192.0.2.2, remotePort: 0}]}`, want: /bgp\.peers\.0\.remotePort = 0: must be >= 1/ },
  { name: 'TCP MD5 password refused, value not quoted', yaml: `bgp: {${ENABLED}, peers: [{remoteASN: 65001, remoteAddr: 192.0.2.2, password: s3cret-md5}]}`, want: /bgp\.peers\.0\.password = "\[redacted\]": TCP MD5 signatures \(RFC 2385\) are not supported; remove the key/ },
  { name: 'hold time 1s', yaml: `bgp: {${ENABLED}, holdTime: 1s}`, want: /bgp\.holdTime = "1s": must be 0 or at least 3s \(RFC 4271\)/ },
  { name: 'hold time not whole seconds', yaml: `bgp: {${ENABLED}, holdTime: 4500ms}`, want: /bgp\.holdTime = "4500ms": must be a whole number of seconds/ },
  { name: 'hold time above 16 bits', yaml: `bgp: {${ENABLED}, holdTime: 19h}`, want: /bgp\.holdTime = "19h": must be at most 65535s/ },
  { name: 'keepalive not below hold', yaml: `bgp: {${ENABLED}, holdTime: 9s, keepAliveTime: 9s}`, want: /bgp\.keepAliveTime = "9s": must be less than bgp\.holdTime/ },
  { name: 'keepalive zero with a hold time', yaml: `bgp: {${ENABLED}, holdTime: 9s, keepAliveTime: 0s}`, want: /bgp\.keepAliveTime = "0s": must be at least 1s/ },
  { name: 'node prefix with host bits', yaml: 'bgp: {nodePrefixes: [192.0.2.1/24]}', want: /bgp\.nodePrefixes\.0 = "192\.0\.2\.1\/24": host bits are set; the network is 192\.0\.2\.0\/24/ },
  { name: 'node prefix IPv6', yaml: 'bgp: {nodePrefixes: ["2001:db8::/32"]}', want: /bgp\.nodePrefixes\.0 = "2001:db8::\/32": IPv6 prefixes are not announced/ },
  { name: 'pool prefix with host bits', yaml: 'bgp: {poolPrefixes: [{poolID: web, prefixes: [198.51.100.0/24, 198.51.101.7/31]}]}', want: /bgp\.poolPrefixes\.0\.prefixes\.1 = "198\.51\.101\.7\/31": host bits are set; the network is 198\.51\.101\.6\/31/ },
  { name: 'pool threshold below 0', yaml: 'bgp: {poolPrefixes: [{poolID: web, prefixes: [198.51.100.0/24], withdrawThreshold: -0.1}]}', want: /withdrawThreshold = -0\.1: must be >= 0/ },
  { name: 'pool without prefixes', yaml: 'bgp: {poolPrefixes: [{poolID: web, prefixes: []}]}', want: /bgp\.poolPrefixes\.0\.prefixes = \[\]: must NOT have fewer than 1 items/ },
];

for (const row of BAD) {
  test(`bgp config refused: ${row.name}`, () => {
    const problems = problemsOf(row.yaml);
    assert.ok(problems.some((p) => row.want.test(p)), `want ${String(row.want)}, got:\n${problems.join('\n')}`);
    assert.ok(!problems.join('\n').includes('s3cret-md5'), 'a password is never quoted');
  });
}

test('a full bgp block is accepted, with defaults filled in and remotePort 179 by default', () => {
  const c = parseConfigText(`node: {id: n1}\nbgp:
  enabled: true
  localASN: 4200000001
  routerID: 192.0.2.1
  holdTime: 0s
  keepAliveTime: 30s
  peers: [{remoteASN: 65001, remoteAddr: 192.0.2.2}, {remoteASN: 4200000001, remoteAddr: 192.0.2.3, remotePort: 1179}]
  nodePrefixes: [203.0.113.0/24, 192.0.2.10/32]
  poolPrefixes: [{poolID: web, prefixes: [198.51.100.0/24]}, {poolID: api, prefixes: [0.0.0.0/0], withdrawThreshold: 0.5}]
`);
  assert.deepEqual(c.bgp.peers.map((p) => p.remotePort), [179, 1179]);
  assert.deepEqual(c.bgp.poolPrefixes.map((p) => p.withdrawThreshold), [0, 0.5]);
  assert.equal(c.bgp.listenPort, 179);
});
