import { normaliseAlgorithmName } from '../../core/model/normalize.js';
import type { Config } from './types.js';
import { parseDuration, parseMicros } from './duration.js';
import { toFqdn } from '../net/dns-names.js';
import { isIpAddress, scopeIdOf } from '../net/ip.js';
import { scriptPolicyOf, scriptRefusal } from './script-policy.js';
import { isBase64Secret } from '../crypto/base64.js';
import { parseNotifyAddress } from '../net/notify-address.js';
import { checkBgpRules } from './bgp-rules.js';

/** The rule an IP map key breaks, or undefined when it is an IP literal without a scope id. */
function ipKeyRule(key: string): string | undefined {
  if (isIpAddress(key)) return undefined;
  const scope = scopeIdOf(key);
  return scope === undefined ? 'keys must be valid IP addresses' : `keys must not carry a scope id (%${scope})`;
}

/** One semantic problem: the key path, the bad value, and the rule it breaks. */
export interface Problem { path: (string | number)[]; value: unknown; rule: string }

/**
 * Checks the rules the schema cannot express ("Validation at startup" in gslb-config-auth.md §2 and
 * the required-when rules). Returns every problem, never only the first. Pure.
 */
export function checkConfigSemantics(c: Config): Problem[] {
  const out: Problem[] = [];
  const add = (path: (string | number)[], value: unknown, rule: string) => out.push({ path, value, rule });

  const algo = normaliseAlgorithmName(c.loadbalancer.algorithm);
  const lb = c.loadbalancer;
  if (algo === 'geo-ip' && !lb.geoip.dbPath) add(['loadbalancer', 'geoip', 'dbPath'], undefined, 'required when loadbalancer.algorithm is geo-ip');
  if (algo === 'map-file' && lb.mapFile.rules.length === 0) add(['loadbalancer', 'mapFile', 'rules'], lb.mapFile.rules, 'at least one rule is required when loadbalancer.algorithm is map-file');
  if (algo === 'asn') {
    if (!lb.asn.dbPath) add(['loadbalancer', 'asn', 'dbPath'], undefined, 'required when loadbalancer.algorithm is asn');
    if (lb.asn.rules.length === 0) add(['loadbalancer', 'asn', 'rules'], lb.asn.rules, 'at least one rule is required when loadbalancer.algorithm is asn');
  }
  if (algo === 'failover') add(['loadbalancer', 'algorithm'], lb.algorithm, 'failover is set per service, not in the static configuration');
  lb.asn.rules.forEach((r, i) => {
    if (r.asn === undefined && r.org === undefined) add(['loadbalancer', 'asn', 'rules', i], r, 'each rule needs at least one of asn and org');
  });
  for (const ip of Object.keys(lb.weights)) {
    const rule = ipKeyRule(ip);
    if (rule) add(['loadbalancer', 'weights', ip], ip, rule);
  }
  for (const ip of Object.keys(lb.geoip.endpointLocations)) {
    const rule = ipKeyRule(ip);
    if (rule) add(['loadbalancer', 'geoip', 'endpointLocations', ip], ip, rule);
  }

  const h = c.health;
  const interval = parseDuration(h.checkinterval);
  const timeout = parseDuration(h.timeout);
  if (interval !== undefined && interval <= 0) add(['health', 'checkinterval'], h.checkinterval, 'must be greater than 0');
  if (timeout !== undefined && timeout <= 0) add(['health', 'timeout'], h.timeout, 'must be greater than 0');
  if (h.enabled && h.type === 'script' && !h.scriptPath && !h.scriptContent) add(['health', 'scriptPath'], undefined, 'scriptPath or scriptContent is required when health.type is script');
  if (h.enabled && h.type === 'webhook' && !h.webhookURL) add(['health', 'webhookURL'], undefined, 'required when health.type is webhook');
  // The file's own script check obeys the same policy as git and the system key (docs/health.md).
  const refusal = h.enabled && h.type === 'script' ? scriptRefusal({ type: 'script', scriptPath: h.scriptPath, scriptContent: h.scriptContent }, scriptPolicyOf(h)) : undefined;
  if (refusal) add(h.allowScripts ? ['health', 'scriptPath'] : ['health', 'type'], h.allowScripts ? h.scriptPath : h.type, refusal.reason);

  const hbi = parseDuration(c.state.heartbeatInterval);
  const hbt = parseDuration(c.state.heartbeatTTL);
  if (hbi !== undefined && hbi <= 0) add(['state', 'heartbeatInterval'], c.state.heartbeatInterval, 'must be greater than 0');
  if (hbi !== undefined && hbt !== undefined && hbt <= hbi) add(['state', 'heartbeatTTL'], c.state.heartbeatTTL, 'must be greater than state.heartbeatInterval');
  const bi = parseDuration(c.backup.interval);
  if (bi !== undefined && bi <= 0) add(['backup', 'interval'], c.backup.interval, 'must be greater than 0');
  if (c.state.enableConfigSync && c.state.nats.servers.length === 0) add(['state', 'enableConfigSync'], true, 'needs state.nats.servers');

  // Stale queries (docs/dns.md "Stale queries"): shorter than a busy moment would drop live queries;
  // longer than a client waits would answer no one.
  const age = parseDuration(c.dns.maxQueryAge);
  if (age !== undefined && age !== 0 && (age < 100 || age > 60_000)) add(['dns', 'maxQueryAge'], c.dns.maxQueryAge, 'must be 0s (off) or between 100ms and 60s');
  // Receive coalescing (docs/dns.md "Receive coalescing"): below 20 µs a timer costs more than it
  // saves; above 10 ms the wait would show in every client's latency.
  const co = parseMicros(c.dns.udpCoalesce);
  if (co !== undefined && co !== 0 && (co < 20 || co > 10_000)) add(['dns', 'udpCoalesce'], c.dns.udpCoalesce, 'must be 0s (off) or between 20us and 10ms');
  // Dynamic updates (docs/dns.md "Dynamic updates"): each grant names a configured key.
  const upd = c.dns.update;
  if (upd.enabled && upd.grants.length === 0) add(['dns', 'update', 'enabled'], true, 'needs at least one grant in dns.update.grants');
  const known = new Set(c.dns.axfr.tsigKeys.map((k) => toFqdn(k.name)));
  // A key belongs to one tenant (docs/dns.md "Who gets which records"): its own `tenant`, and its
  // grants act for that tenant; the operator's key (`tenant: system`) may hold a grant to the operator tenant.
  const keyTenant = new Map(c.dns.axfr.tsigKeys.filter((k) => k.tenant !== undefined).map((k) => [toFqdn(k.name), k.tenant!]));
  const grantTenant = new Map<string, string>();
  upd.grants.forEach((g, i) => {
    const k = toFqdn(g.key);
    if (!known.has(k)) add(['dns', 'update', 'grants', i, 'key'], g.key, 'must be the name of a key in dns.axfr.tsigKeys');
    const own = keyTenant.get(k);
    if (own !== undefined && own !== g.tenant && !(own === 'system' && g.tenant === c.tenancy.operatorTenant)) {
      add(['dns', 'update', 'grants', i, 'tenant'], g.tenant, `must be the tenant of key ${g.key} (${own})`);
    }
    const other = grantTenant.get(k);
    if (other !== undefined && other !== g.tenant) add(['dns', 'update', 'grants', i, 'tenant'], g.tenant, `key ${g.key} already acts for tenant ${other}: a key belongs to one tenant`);
    else grantTenant.set(k, g.tenant);
  });
  // Zone transfers (docs/dns.md "Zone transfers"). Secrets are never quoted back.
  const axfr = c.dns.axfr;
  if (axfr.requireTsig && axfr.tsigKeys.length === 0) add(['dns', 'axfr', 'requireTsig'], true, 'needs at least one key in dns.axfr.tsigKeys');
  const keyNames = new Map<string, number>();
  axfr.tsigKeys.forEach((k, i) => {
    if (!isBase64Secret(k.secret)) add(['dns', 'axfr', 'tsigKeys', i, 'secret'], '[redacted]', 'must be a non-empty base64 string');
    const n = toFqdn(k.name);
    const first = keyNames.get(n);
    if (first !== undefined) add(['dns', 'axfr', 'tsigKeys', i, 'name'], k.name, `is already the name of dns.axfr.tsigKeys[${first}]`);
    else keyNames.set(n, i);
  });
  // NOTIFY (docs/dns.md "Zone transfers"): a target is an IP address and port; a key is a configured one.
  if (axfr.notify.length > 0 && !axfr.enabled) add(['dns', 'axfr', 'notify'], axfr.notify.map((t) => t.address), 'needs dns.axfr.enabled: a secondary notified could not transfer');
  axfr.notify.forEach((t, i) => {
    if (!parseNotifyAddress(t.address)) add(['dns', 'axfr', 'notify', i, 'address'], t.address, 'must be ip:port or [ipv6]:port with a port 1..65535');
    if (t.key !== undefined && !keyNames.has(toFqdn(t.key))) add(['dns', 'axfr', 'notify', i, 'key'], t.key, 'must be the name of a key in dns.axfr.tsigKeys');
  });
  const nt = parseDuration(axfr.notifyTimeout);
  if (nt !== undefined && (nt < 100 || nt > 60_000)) add(['dns', 'axfr', 'notifyTimeout'], axfr.notifyTimeout, 'must be between 100ms and 60s');
  // Transfers over TLS and the catalog zone (docs/dns.md "Zone transfers over TLS", "Catalog zone");
  // the certificate and key files are read in load.ts.
  if (axfr.tlsOnly && !c.dns.tls) add(['dns', 'axfr', 'tlsOnly'], true, 'needs dns.tls: with no TLS listener no transfer could be made');
  const catalog = c.dns.catalog?.zone;
  if (catalog !== undefined) {
    if (!axfr.enabled) add(['dns', 'catalog', 'zone'], catalog, 'needs dns.axfr.enabled: a catalog is read by zone transfer');
    const domain = c.dns.domain ? toFqdn(c.dns.domain).toLowerCase() : undefined;
    const cat = toFqdn(catalog).toLowerCase();
    if (domain !== undefined && (cat === domain || cat.endsWith(`.${domain}`))) add(['dns', 'catalog', 'zone'], catalog, 'must not be dns.domain or a name under it (catalog.invalid is the usual name)');
  }

  // DNSSEC (docs/dns.md "DNSSEC"): signatures must outlive the hour inception is set back and the
  // renewal after a quarter of the validity; the key files are checked in load.ts.
  const validity = parseDuration(c.dns.dnssec.signatureValidity);
  if (validity !== undefined && validity < 86_400_000) add(['dns', 'dnssec', 'signatureValidity'], c.dns.dnssec.signatureValidity, 'must be at least 1d');
  if (c.dns.dnssec.enabled && c.dns.dnssec.keys.length === 0) add(['dns', 'dnssec', 'keys'], [], 'needs at least one key when dns.dnssec.enabled is true (dnssec-keygen writes them)');

  if (c.redirect.enabled && c.redirect.port === undefined) add(['redirect', 'port'], undefined, 'required when redirect.enabled is true');

  checkBgpRules(c.bgp, add);

  const o = c.auth.oidc;
  if (o.enabled) {
    if (!o.discoveryUrl) add(['auth', 'oidc', 'discoveryUrl'], undefined, 'required when auth.oidc.enabled is true');
    else if (!o.discoveryUrl.startsWith('https://')) add(['auth', 'oidc', 'discoveryUrl'], o.discoveryUrl, 'must be an https URL');
    if (!o.clientId) add(['auth', 'oidc', 'clientId'], undefined, 'required when auth.oidc.enabled is true');
    if (!o.clientSecret) add(['auth', 'oidc', 'clientSecret'], undefined, 'required when auth.oidc.enabled is true');
    if (!o.redirectUri) add(['auth', 'oidc', 'redirectUri'], undefined, 'required when auth.oidc.enabled is true');
    else if (!/^https?:\/\/.+\/api\/v1\/auth\/oidc\/callback$/.test(o.redirectUri)) add(['auth', 'oidc', 'redirectUri'], o.redirectUri, 'must be a full URL ending in /api/v1/auth/oidc/callback');
  }
  if (c.gitops.repoURL && c.gitops.requireSignature && !c.gitops.keyringFile) add(['gitops', 'keyringFile'], undefined, 'required when gitops.requireSignature is true');
  if (c.gitops.verifyAll && !c.gitops.requireSignature) add(['gitops', 'verifyAll'], true, 'needs gitops.requireSignature: true (it verifies signatures)');
  if (c.gitops.quorum.length && !c.gitops.requireSignature) add(['gitops', 'quorum'], undefined, 'needs gitops.requireSignature: true (it counts signatures)');
  // canary plans and their decisions travel in the config stream (docs/gitops.md "Canary apply")
  const canary = c.gitops.canary;
  if (canary && !c.state.enableConfigSync) add(['gitops', 'canary'], undefined, 'needs state.enableConfigSync: true (canary plans and decisions travel in the config stream)');
  const bake = canary ? parseDuration(canary.bakeTime) : undefined;
  if (canary && bake !== undefined && bake <= 0) add(['gitops', 'canary', 'bakeTime'], canary.bakeTime, 'must be greater than 0');
  c.gitops.quorum.forEach((q, i) => {
    if (q.required > q.keys.length) add(['gitops', 'quorum', i, 'required'], q.required, `at most the number of keys (${q.keys.length})`);
  });
  checkRollback(c.gitops, add);
  // A suffix delegated twice would silently go to the first tenant listed (runtime/tenancy/names.ts).
  const seen = new Map<string, number>();
  c.tenancy.delegations.forEach((d, i) => {
    const s = toFqdn(d.suffix);
    const first = seen.get(s);
    if (first !== undefined) add(['tenancy', 'delegations', i, 'suffix'], d.suffix, `is already delegated by tenancy.delegations[${first}]`);
    else seen.set(s, i);
  });
  // Every tier a workspace can be on must exist (docs/forms.md "Tiers").
  const tiers = c.forms.tiers;
  if (!Object.hasOwn(tiers, c.forms.defaultTier)) add(['forms', 'defaultTier'], c.forms.defaultTier, `must be one of the tiers in forms.tiers (${Object.keys(tiers).join(', ')})`);
  for (const [tenant, tier] of Object.entries(c.forms.tenantTiers)) {
    if (!Object.hasOwn(tiers, tier)) add(['forms', 'tenantTiers', tenant], tier, `must be one of the tiers in forms.tiers (${Object.keys(tiers).join(', ')})`);
  }
  return out;
}

/**
 * gitops.rollback (docs/gitops.md "Automatic rollback"): it watches what the controller applies, so
 * it needs a repo; readings at least 100 ms apart and more than one per window; and at least one
 * check that can breach.
 */
function checkRollback(g: Config['gitops'], add: (path: (string | number)[], value: unknown, rule: string) => void): void {
  const rb = g.rollback;
  const at = (k: string) => ['gitops', 'rollback', k];
  if (rb.enabled && !g.repoURL) add(at('enabled'), true, 'needs gitops.repoURL: only revisions the controller applies are watched');
  const every = parseDuration(rb.checkInterval);
  const window = parseDuration(rb.window);
  if (every !== undefined && every < 100) add(at('checkInterval'), rb.checkInterval, 'must be at least 100ms');
  if (every !== undefined && window !== undefined && window <= every) add(at('window'), rb.window, `must be longer than gitops.rollback.checkInterval (${rb.checkInterval})`);
  if (rb.enabled && g.canary) add(at('enabled'), true, 'cannot be combined with gitops.canary: a canary revision reaches the nodes through the config stream, which the rollback watch does not follow (the canary bake is its watch)');
  if (rb.enabled && rb.minHealthyShare === 0 && rb.maxServfailRate === 1) {
    add(['gitops', 'rollback'], { minHealthyShare: 0, maxServfailRate: 1 }, 'minHealthyShare 0 and maxServfailRate 1 turn both checks off: nothing could trigger a rollback');
  }
}
