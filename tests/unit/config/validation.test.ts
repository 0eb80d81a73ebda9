import { test } from 'node:test';
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { parseConfigText } from '../../../runtime/config/load.js';
import { ValidationError } from '../../../runtime/errors.js';

/** Every startup-validation rule (gslb-config-auth.md §2), each with a bad config and the message it must give. */
const BAD: { name: string; yaml: string; want: RegExp[] }[] = [
  { name: 'dns port above range', yaml: 'dns: {port: 70000}', want: [/dns\.port = 70000: must be <= 65535/] },
  { name: 'dns port zero', yaml: 'dns: {port: 0}', want: [/dns\.port = 0: must be >= 1/] },
  { name: 'dns listen address', yaml: 'dns: {listenAddr: 300.1.1.1}', want: [/dns\.listenAddr = "300\.1\.1\.1": must be a valid IPv4 or IPv6 address/] },
  { name: 'dns domain', yaml: 'dns: {domain: "bad domain!"}', want: [/dns\.domain = "bad domain!": must be a valid DNS name/] },
  { name: 'api port', yaml: 'api: {port: 99999}', want: [/api\.port = 99999: must be <= 65535/] },
  { name: 'api listen address', yaml: 'api: {listenAddr: localhost}', want: [/api\.listenAddr = "localhost": must be a valid IPv4 or IPv6 address/] },
  { name: 'metrics port', yaml: 'metrics: {port: -1}', want: [/metrics\.port = -1: must be >= 1/] },
  { name: 'metrics listen address', yaml: 'metrics: {listenAddr: nope}', want: [/metrics\.listenAddr = "nope"/] },
  { name: 'endpoint IP', yaml: 'loadbalancer: {endpoints: [10.0.0.1, 10.0.0]}', want: [/loadbalancer\.endpoints\.1 = "10\.0\.0": must be a valid IPv4 or IPv6 address/] },
  { name: 'negative weight', yaml: 'loadbalancer: {weights: {10.0.0.1: -1}}', want: [/loadbalancer\.weights\.10\.0\.0\.1 = -1: must be >= 0/] },
  { name: 'weight key not an IP', yaml: 'loadbalancer: {weights: {web1: 2}}', want: [/loadbalancer\.weights\.web1 = "web1": keys must be valid IP addresses/] },
  { name: 'latitude out of range', yaml: 'loadbalancer: {geoip: {dbPath: /x.mmdb, endpointLocations: {10.0.0.1: {lat: 91, lon: 0}}}}', want: [/lat = 91: must be <= 90/] },
  { name: 'longitude out of range', yaml: 'loadbalancer: {geoip: {dbPath: /x.mmdb, endpointLocations: {10.0.0.1: {lat: 0, lon: -181}}}}', want: [/lon = -181: must be >= -180/] },
  { name: 'map rule CIDR', yaml: 'loadbalancer: {mapFile: {rules: [{cidr: 10.0.0.0/33, endpoint: 10.0.0.1}]}}', want: [/loadbalancer\.mapFile\.rules\.0\.cidr = "10\.0\.0\.0\/33": must be a valid CIDR/] },
  { name: 'map rule endpoint', yaml: 'loadbalancer: {mapFile: {rules: [{cidr: 10.0.0.0/8, endpoint: x}]}}', want: [/loadbalancer\.mapFile\.rules\.0\.endpoint = "x": must be a valid IPv4 or IPv6 address/] },
  { name: 'asn rule endpoint', yaml: 'loadbalancer: {asn: {rules: [{asn: 1, endpoint: 1.2.3}]}}', want: [/loadbalancer\.asn\.rules\.0\.endpoint/] },
  { name: 'asn rule without asn or org', yaml: 'loadbalancer: {asn: {rules: [{endpoint: 10.0.0.1}]}}', want: [/loadbalancer\.asn\.rules\.0 = .*each rule needs at least one of asn and org/] },
  { name: 'geo-ip needs dbPath', yaml: 'loadbalancer: {algorithm: geo-ip}', want: [/loadbalancer\.geoip\.dbPath = \(unset\): required when loadbalancer\.algorithm is geo-ip/] },
  { name: 'geoip alias needs dbPath', yaml: 'loadbalancer: {algorithm: geoip}', want: [/required when loadbalancer\.algorithm is geo-ip/] },
  { name: 'map-file needs rules', yaml: 'loadbalancer: {algorithm: map-file}', want: [/loadbalancer\.mapFile\.rules = \[\]: at least one rule is required/] },
  { name: 'asn needs dbPath and rules', yaml: 'loadbalancer: {algorithm: asn}', want: [/loadbalancer\.asn\.dbPath = \(unset\): required/, /loadbalancer\.asn\.rules = \[\]: at least one rule/] },
  { name: 'unknown algorithm', yaml: 'loadbalancer: {algorithm: random}', want: [/loadbalancer\.algorithm = "random": must be one of/] },
  { name: 'failover is per service', yaml: 'loadbalancer: {algorithm: failover}', want: [/failover is set per service/] },
  { name: 'health interval duration', yaml: 'health: {checkinterval: 10}', want: [/health\.checkinterval = 10: must be of type string/] },
  { name: 'health timeout duration', yaml: 'health: {timeout: 2 seconds}', want: [/health\.timeout = "2 seconds": must be a duration/] },
  { name: 'health type', yaml: 'health: {type: udp}', want: [/health\.type = "udp": must be one of "tcp", "http", "icmp", "script", "webhook"/] },
  { name: 'heartbeat interval duration', yaml: 'state: {heartbeatInterval: fast}', want: [/state\.heartbeatInterval = "fast": must be a duration/] },
  { name: 'heartbeat ttl duration', yaml: 'state: {heartbeatTTL: 1y}', want: [/state\.heartbeatTTL = "1y": must be a duration/] },
  { name: 'suffix delegated twice', yaml: 'tenancy: {delegations: [{suffix: a.example., tenant: a}, {suffix: A.example, tenant: b}]}', want: [/tenancy\.delegations\.1\.suffix = "A\.example": is already delegated by tenancy\.delegations\[0\]/] },
  { name: 'dns versionName', yaml: 'dns: {versionName: "not a name!"}', want: [/dns\.versionName = "not a name!"/] },
  { name: 'verifyAll needs signatures', yaml: 'gitops: {requireSignature: false, verifyAll: true}', want: [/gitops\.verifyAll = true: needs gitops\.requireSignature: true/] },
  { name: 'quorum needs signatures', yaml: 'gitops: {requireSignature: false, quorum: [{path: prod/, keys: [0123456789ABCDEF], required: 1}]}', want: [/gitops\.quorum = .*needs gitops\.requireSignature: true/] },
  { name: 'quorum asks more than its keys', yaml: 'gitops: {quorum: [{path: prod/, keys: [0123456789ABCDEF], required: 2}]}', want: [/gitops\.quorum\.0\.required = 2: at most the number of keys \(1\)/] },
  { name: 'rollback needs a repo', yaml: 'gitops: {rollback: {enabled: true}}', want: [/gitops\.rollback\.enabled = true: needs gitops\.repoURL/] },
  { name: 'rollback share above 1', yaml: 'gitops: {rollback: {minHealthyShare: 1.5}}', want: [/gitops\.rollback\.minHealthyShare = 1\.5: must be <= 1/] },
  { name: 'rollback rate below 0', yaml: 'gitops: {rollback: {maxServfailRate: -0.1}}', want: [/gitops\.rollback\.maxServfailRate = -0\.1: must be >= 0/] },
  { name: 'rollback minQueries not whole', yaml: 'gitops: {rollback: {minQueries: 2.5}}', want: [/gitops\.rollback\.minQueries = 2\.5: must be (of type )?integer/] },
  { name: 'rollback window not a duration', yaml: 'gitops: {rollback: {window: soon}}', want: [/gitops\.rollback\.window = "soon": must be a duration/] },
  { name: 'rollback window not past the check interval', yaml: 'gitops: {rollback: {window: 5s, checkInterval: 5s}}', want: [/gitops\.rollback\.window = "5s": must be longer than gitops\.rollback\.checkInterval \(5s\)/] },
  { name: 'rollback check interval too short', yaml: 'gitops: {rollback: {checkInterval: 10ms}}', want: [/gitops\.rollback\.checkInterval = "10ms": must be at least 100ms/] },
  { name: 'rollback with both checks off', yaml: 'gitops: {repoURL: /srv/config.git, requireSignature: false, rollback: {enabled: true, minHealthyShare: 0, maxServfailRate: 1}}', want: [/gitops\.rollback = .*turn both checks off: nothing could trigger a rollback/] },
  { name: 'rollback unknown key', yaml: 'gitops: {rollback: {threshold: 0.5}}', want: [/gitops\.rollback\.threshold.*unknown key "threshold"/] },
  { name: 'rollback together with canary', yaml: 'gitops: {repoURL: /srv/config.git, requireSignature: false, rollback: {enabled: true}, canary: {nodes: [a]}}', want: [/gitops\.rollback\.enabled = true: cannot be combined with gitops\.canary/] },
  { name: 'canary needs config sync', yaml: 'gitops: {canary: {nodes: [a]}}', want: [/gitops\.canary = \(unset\): needs state\.enableConfigSync: true/] },
  { name: 'canary without nodes', yaml: 'gitops: {canary: {nodes: []}}', want: [/gitops\.canary\.nodes = \[\]: must NOT have fewer than 1 items/] },
  { name: 'canary node named twice', yaml: 'gitops: {canary: {nodes: [a, a]}}', want: [/gitops\.canary\.nodes = .*must NOT have duplicate items/] },
  { name: 'canary bake time zero', yaml: 'state: {enableConfigSync: true, nats: {servers: ["nats://127.0.0.1:4222"]}}\ngitops: {canary: {nodes: [a], bakeTime: 0s}}', want: [/gitops\.canary\.bakeTime = "0s": must be greater than 0/] },
  { name: 'canary share above 1', yaml: 'gitops: {canary: {nodes: [a], minHealthyShare: 50}}', want: [/gitops\.canary\.minHealthyShare = 50: must be <= 1/] },
  { name: 'quorum key not a fingerprint', yaml: 'gitops: {quorum: [{path: prod/, keys: [ops], required: 1}]}', want: [/gitops\.quorum\.0\.keys\.0 = "ops"/] },
  { name: 'heartbeat ttl above interval', yaml: 'state: {heartbeatInterval: 10s, heartbeatTTL: 5s}', want: [/state\.heartbeatTTL = "5s": must be greater than state\.heartbeatInterval/] },
  { name: 'backup interval duration', yaml: 'backup: {interval: hourly}', want: [/backup\.interval = "hourly": must be a duration/] },
  { name: 'backup keep negative', yaml: 'backup: {keep: -1}', want: [/backup\.keep = -1: must be >= 0/] },
  { name: 'health policy', yaml: 'state: {healthPolicy: majority}', want: [/state\.healthPolicy = "majority": must be one of "prefer-local", "local-only", "global-any-healthy", "global-quorum"/] },
  { name: 'quorum percent', yaml: 'state: {quorumMinPercent: 101}', want: [/state\.quorumMinPercent = 101: must be <= 100/] },
  { name: 'logging format', yaml: 'logging: {format: xml}', want: [/logging\.format = "xml": must be one of "json", "text"/] },
  { name: 'logging level', yaml: 'logging: {level: trace}', want: [/logging\.level = "trace": must be one of "debug", "info", "warn", "error"/] },
  { name: 'bgp localASN zero', yaml: 'bgp: {enabled: true, localASN: 0, routerID: 10.0.0.1}', want: [/bgp\.localASN = 0: required and non-zero/] },
  { name: 'bgp routerID missing', yaml: 'bgp: {enabled: true, localASN: 65000}', want: [/bgp\.routerID = \(unset\): required when bgp\.enabled is true/] },
  { name: 'bgp peer ASN zero', yaml: 'bgp: {peers: [{remoteASN: 0, remoteAddr: 10.0.0.2}]}', want: [/bgp\.peers\.0\.remoteASN = 0: must be non-zero/] },
  { name: 'bgp prefix', yaml: 'bgp: {nodePrefixes: [10.0.0.0/40]}', want: [/bgp\.nodePrefixes\.0 = "10\.0\.0\.0\/40": must be a valid CIDR/] },
  { name: 'bgp withdrawThreshold', yaml: 'bgp: {poolPrefixes: [{poolID: p1, prefixes: [10.0.0.0/24], withdrawThreshold: 1.5}]}', want: [/withdrawThreshold = 1\.5: must be <= 1/] },
  { name: 'bgp hold time below 3s', yaml: 'bgp: {enabled: true, localASN: 65000, routerID: 10.0.0.1, holdTime: 2s}', want: [/bgp\.holdTime = "2s": must be 0 or at least 3s/] },
  { name: 'bcrypt cost', yaml: 'auth: {bcryptCost: 9}', want: [/auth\.bcryptCost = 9: must be >= 10/] },
  { name: 'oidc needs https discovery', yaml: 'auth: {oidc: {enabled: true, discoveryUrl: "http://idp", clientId: a, clientSecret: b, redirectUri: "https://x/api/v1/auth/oidc/callback"}}', want: [/auth\.oidc\.discoveryUrl = "http:\/\/idp": must be an https URL/] },
  { name: 'oidc required fields', yaml: 'auth: {oidc: {enabled: true}}', want: [/discoveryUrl = \(unset\): required/, /clientId = \(unset\): required/, /clientSecret = \(unset\): required/, /redirectUri = \(unset\): required/] },
  { name: 'redirect port when enabled', yaml: 'redirect: {enabled: true}', want: [/redirect\.port = \(unset\): required when redirect\.enabled is true/] },
  { name: 'unknown key', yaml: 'dns: {prot: 53}', want: [/dns\.prot = 53: unknown key "prot"/] },
  { name: 'alert webhook url', yaml: 'alerts: {webhooks: [{url: "ftp://x"}]}', want: [/alerts\.webhooks\.0\.url = "ftp:\/\/x": must be an http or https URL/] },
  { name: 'oncall_a routing key', yaml: 'alerts: {oncall_a: [{routingKey: ""}]}', want: [/alerts\.oncall_a\.0\.routingKey = "": must NOT have fewer than 1 characters/] },
  { name: 'yaml syntax', yaml: 'dns: {port: 53\n', want: [/config\.yaml:\d+: /] },
  { name: 'dnssec algorithm', yaml: 'dns: {dnssec: {algorithm: rsasha256}}', want: [/dns\.dnssec\.algorithm = "rsasha256": must be one of "ecdsap256sha256", "ed25519"/] },
  { name: 'dnssec key role', yaml: 'dns: {dnssec: {keys: [{file: /k, role: ksk2}]}}', want: [/dns\.dnssec\.keys\.0\.role = "ksk2": must be one of "ksk", "zsk", "csk"/] },
  { name: 'dnssec key state', yaml: 'dns: {dnssec: {keys: [{file: /k, role: zsk, state: revoked}]}}', want: [/dns\.dnssec\.keys\.0\.state = "revoked": must be one of "publish", "active", "retired"/] },
  { name: 'dnssec enabled without keys', yaml: 'dns: {dnssec: {enabled: true}}', want: [/dns\.dnssec\.keys = \[\]: needs at least one key when dns\.dnssec\.enabled is true/] },
  { name: 'stale query age too short', yaml: 'dns: {maxQueryAge: 50ms}', want: [/dns\.maxQueryAge = "50ms": must be 0s \(off\) or between 100ms and 60s/] },
  { name: 'stale query age too long', yaml: 'dns: {maxQueryAge: 2m}', want: [/dns\.maxQueryAge = "2m": must be 0s \(off\) or between 100ms and 60s/] },
  { name: 'stale query age not a duration', yaml: 'dns: {maxQueryAge: soon}', want: [/dns\.maxQueryAge = "soon": /] },
  { name: 'coalescing window too short', yaml: 'dns: {udpCoalesce: 10us}', want: [/dns\.udpCoalesce = "10us": must be 0s \(off\) or between 20us and 10ms/] },
  { name: 'coalescing window too long', yaml: 'dns: {udpCoalesce: 11ms}', want: [/dns\.udpCoalesce = "11ms": must be 0s \(off\) or between 20us and 10ms/] },
  { name: 'coalescing window not a duration', yaml: 'dns: {udpCoalesce: soon}', want: [/dns\.udpCoalesce = "soon": must be a duration such as 250us, 1ms or 0s/] },
  { name: 'coalescing window without a unit', yaml: 'dns: {udpCoalesce: 250}', want: [/dns\.udpCoalesce = 250: must be of type string/] },
  { name: 'dnssec validity too short', yaml: 'dns: {dnssec: {signatureValidity: 2h}}', want: [/dns\.dnssec\.signatureValidity = "2h": must be at least 1d/] },
  { name: 'dnssec key file missing', yaml: 'dns:\n  dnssec:\n    enabled: true\n    keys:\n      - {file: /nonexistent/Kx.+013+00001, role: csk}\n', want: [/config\.yaml:5: dns\.dnssec\.keys\.0\.file = "\/nonexistent\/Kx\.\+013\+00001": cannot read \/nonexistent\/Kx\.\+013\+00001\.private \(ENOENT\)/] },
  { name: 'TCP probe mode', yaml: 'health:\n  tcpProbeMode: raw\n', want: [/config\.yaml:2: health\.tcpProbeMode = "raw": must be one of "connect", "syn"/] },
];

for (const row of BAD) {
  test(`config rejected: ${row.name}`, () => {
    let err: unknown;
    try { parseConfigText(row.yaml); } catch (e) { err = e; }
    assert.ok(err instanceof ValidationError, `expected a ValidationError for ${row.yaml}`);
    for (const w of row.want) assert.match(err.message, w);
  });
}

test('gitops.canary: defaults for everything but the nodes; accepted with config sync', () => {
  const c = parseConfigText('state: {enableConfigSync: true, nats: {servers: ["nats://127.0.0.1:4222"]}}\ngitops: {canary: {nodes: [a, b]}}');
  assert.deepEqual(c.gitops.canary, { nodes: ['a', 'b'], bakeTime: '2m', minHealthyShare: 0.5, maxServfailRate: 0.05, minQueries: 100 });
  assert.equal(parseConfigText('').gitops.canary, undefined, 'off unless set');
});

test('every problem is listed, not only the first, each with file:line', () => {
  let err: ValidationError | undefined;
  try {
    parseConfigText('dns:\n  port: 70000\napi:\n  port: 0\nlogging:\n  level: loud\n', 'cfg.yaml');
  } catch (e) { err = e as ValidationError; }
  assert.ok(err);
  assert.equal(err.problems.length, 3);
  assert.match(err.problems.join('\n'), /cfg\.yaml:2: dns\.port/);
  assert.match(err.problems.join('\n'), /cfg\.yaml:4: api\.port/);
  assert.match(err.problems.join('\n'), /cfg\.yaml:6: logging\.level/);
});

test('defaults from the spec fill an empty file', () => {
  const c = parseConfigText('');
  assert.equal(c.cluster.id, 'dev-cluster');
  assert.equal(c.dns.listenAddr, '0.0.0.0');
  assert.equal(c.dns.port, 5353);
  assert.equal(c.dns.queryLog, false);
  assert.equal(c.dns.maxQueryAge, '1s');
  // 0s switches stale-query dropping off; the bounds themselves are accepted
  for (const ok of ['0s', '100ms', '60s']) assert.equal(parseConfigText(`dns: {maxQueryAge: ${ok}}`).dns.maxQueryAge, ok);
  assert.equal(c.dns.udpCoalesce, '250us');
  for (const ok of ['0s', '0', '20us', '500µs', '1ms500us', '10ms']) assert.equal(parseConfigText(`dns: {udpCoalesce: "${ok}"}`).dns.udpCoalesce, ok);
  assert.equal(c.dns.axfr.enabled, false);
  assert.equal(c.dns.axfr.requireTsig, false);
  assert.equal(c.database.path, '/var/lib/gslbd/gslbd.db');
  assert.deepEqual([c.api.enabled, c.api.listenAddr, c.api.port], [false, '127.0.0.1', 8080]);
  assert.equal(c.loadbalancer.algorithm, 'round-robin');
  assert.equal(c.health.enabled, false);
  assert.deepEqual([c.health.checkinterval, c.health.timeout, c.health.port, c.health.http.path, c.health.http.expectedstatus, c.health.icmpCount], ['10s', '2s', 80, '/', 200, 3]);
  assert.equal(c.health.http.insecureSkipVerify, false);
  assert.equal(c.health.tcpProbeMode, 'connect', 'half-open SYN probes are opt-in');
  assert.deepEqual([c.gitops.branch, c.gitops.pollInterval, c.gitops.requireSignature], ['main', '30s', true]);
  assert.deepEqual(c.gitops.rollback, { enabled: false, window: '5m', checkInterval: '5s', minHealthyShare: 0.5, maxServfailRate: 0.05, minQueries: 100 });
  assert.deepEqual([c.state.healthPolicy, c.state.quorumMinPercent, c.state.heartbeatInterval, c.state.heartbeatTTL], ['prefer-local', 51, '10s', '30s']);
  assert.deepEqual([c.state.enableConfigSync, c.state.config.mode, c.state.config.stream, c.state.config.subjectPrefix, c.state.config.kvBucket, c.state.config.applyTimeout], [false, 'jetstream', 'SVC.cfg', 'svc.cfg', 'SVC_CFG', '5s']);
  assert.deepEqual([c.backup.enabled, c.backup.dir, c.backup.interval, c.backup.keep], [false, '/var/lib/gslbd/backups', '1h', 24]);
  assert.deepEqual([c.logging.format, c.logging.level], ['json', 'info']);
  assert.equal(c.metrics.enablePrometheus, false);
  assert.deepEqual([c.redirect.enabled, c.redirect.listenAddr], [false, '0.0.0.0']);
  assert.deepEqual([c.bgp.enabled, c.bgp.listenAddr, c.bgp.listenPort, c.bgp.holdTime, c.bgp.keepAliveTime], [false, '0.0.0.0', 179, '90s', '30s']);
  assert.deepEqual([c.auth.sessionTTL, c.auth.sessionExtend, c.auth.bcryptCost, c.auth.setupEndpoint], ['24h', true, 12, true]);
  assert.deepEqual(c.auth.oidc.scopes, ['openid', 'profile', 'email']);
  assert.equal(c.auth.oidc.defaultRole, 'viewer');
  assert.ok(c.node.id.length > 0, 'node.id defaults to the hostname');
});

test('health.type accepts all five check types', () => {
  for (const t of ['tcp', 'http', 'icmp', 'script', 'webhook']) {
    // a script check needs scripts allowed and its file inside scriptDirs (docs/health.md "Script checks")
    const extra = t === 'script' ? ', scriptPath: /bin/true, allowScripts: true, scriptDirs: [/bin]' : t === 'webhook' ? ', webhookURL: "http://127.0.0.1/hc"' : '';
    assert.equal(parseConfigText(`health: {enabled: true, type: ${t}${extra}}`).health.type, t);
  }
});

test('health.tcpProbeMode accepts connect and syn', () => {
  for (const m of ['connect', 'syn']) assert.equal(parseConfigText(`health: {tcpProbeMode: ${m}}`).health.tcpProbeMode, m);
});

test('environment overrides win over the file for the license keys', async () => {
  const { applyEnvOverrides } = await import('../../../runtime/config/load.js');
  const file = parseConfigText('license: {secret: file-secret, licenseKey: file-key}');
  const c = applyEnvOverrides(file, { GSLB_LICENSE_SECRET: 'env-secret', GSLB_LICENSE_KEY: 'env-key' });
  assert.equal(c.license.secret, 'env-secret');
  assert.equal(c.license.licenseKey, 'env-key');
});

test('the example config is valid', async () => {
  const { loadConfig } = await import('../../../runtime/config/load.js');
  const c = loadConfig('examples/config.yaml', {});
  assert.equal(c.api.enabled, true);
  assert.equal(c.api.listenAddr, '127.0.0.1');
});

test('the redirect listener is built: enabled with a port is a valid config; a bad listen address is refused', () => {
  const c = parseConfigText('redirect:\n  enabled: true\n  listenAddr: 127.0.0.1\n  port: 8081\n', 'config.yaml');
  assert.deepEqual([c.redirect.enabled, c.redirect.listenAddr, c.redirect.port], [true, '127.0.0.1', 8081]);
  assert.throws(() => parseConfigText('redirect:\n  enabled: true\n  listenAddr: nowhere\n  port: 8081\n', 'config.yaml'),
    (err: unknown) => err instanceof ValidationError && err.problems.some((p) => /config\.yaml:3.*redirect\.listenAddr = "nowhere"/.test(p)));
});

test('dns.workers: auto (the default) is one per core, at least 1, at most 8; a number is kept, 0 included; "many" and 65 are refused', () => {
  const want = Math.max(1, Math.min(availableParallelism(), 8));
  assert.equal(parseConfigText('dns:\n  port: 5353\n', 'config.yaml').dns.workers, want);
  assert.equal(parseConfigText('dns:\n  workers: auto\n', 'config.yaml').dns.workers, want);
  assert.equal(parseConfigText('dns:\n  workers: 3\n  dnssec:\n    enabled: false\n', 'config.yaml').dns.workers, 3);
  assert.equal(parseConfigText('dns:\n  workers: 0\n', 'config.yaml').dns.workers, 0);
  for (const bad of ['-1', 'many', '65']) {
    assert.throws(() => parseConfigText(`dns:\n  workers: ${bad}\n`, 'config.yaml'),
      (err: unknown) => err instanceof ValidationError && err.problems.some((p) => /config\.yaml:2.*dns\.workers/.test(p)), bad);
  }
});
