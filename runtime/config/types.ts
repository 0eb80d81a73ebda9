/** The daemon's configuration after defaults are applied (schemas/config.v1.schema.json). */
export interface TsigKey {
  name: string; algorithm: 'hmac-sha256' | 'hmac-sha512' | 'hmac-sha1'; secret: string;
  /** whom the key transfers zones for: a tenant id, or `system` (the whole zone); docs/dns.md "Who gets which records" */
  tenant?: string;
}
export interface HealthFileConfig {
  enabled: boolean; type: 'tcp' | 'http' | 'icmp' | 'script' | 'webhook'; port: number;
  checkinterval: string; timeout: string;
  http: { path: string; host: string; expectedstatus: number; contains: string; tls: boolean; insecureSkipVerify: boolean };
  icmpCount: number; scriptPath?: string; scriptContent?: string; webhookURL?: string; webhookMethod: 'POST' | 'GET';
  scoreWindow: number; rise: number; fall: number;
  allowScripts: boolean; scriptDirs: string[];
  /** how TCP checks probe (docs/health.md "Half-open SYN probes"): connect() per probe, or a bare SYN (IPv4, needs CAP_NET_RAW) */
  tcpProbeMode: 'connect' | 'syn';
}
export interface SmtpFileConfig {
  host: string; port: number; from?: string; to: string[]; username?: string; password?: string; startTls: boolean; tls: boolean;
}
/** A form-service billing tier (`forms.tiers.<name>`, docs/forms.md "Tiers"). */
export interface FormTierConfig {
  forms: number; actionsPerForm: number; submissionsPerMonth: number; fileBytes: number;
  /** absent when a tier given in the file leaves it out (the schema's default applies to the built-in tiers only) */
  features?: ('recaptcha' | 'customDomains')[];
}
export interface Config {
  cluster: { id: string };
  node: { id: string };
  dns: {
    listenAddr: string; port: number; domain?: string; queryLog: boolean; nsNames?: string[];
    soa: { mname?: string; rname?: string; refresh: number; retry: number; expire: number; minimum: number };
    udpPayloadSize: number; lookupDeadline: string; maxQueryAge: string; versionName: string;
    /** receive coalescing window of the batched UDP sockets (`250us`; `0s` off; docs/dns.md "Receive coalescing") */
    udpCoalesce: string;
    /** DNS worker threads answering UDP in one SO_REUSEPORT group, the main thread out of it; 0: the main thread answers UDP (`auto` in the file, resolved at load) */
    workers: number;
    axfr: {
      enabled: boolean; requireTsig: boolean; tsigKeys: TsigKey[];
      /** secondaries sent a NOTIFY when the SOA serial changes (`ip:port` or `[ipv6]:port`; `key`: a tsigKeys name; docs/dns.md "Zone transfers") */
      notify: { address: string; key?: string }[];
      /** wait for the first NOTIFY answer (a duration); doubles per retry */
      notifyTimeout: string;
      /** AXFR and IXFR only over TLS (`dns.tls`): over plain TCP they get REFUSED (docs/dns.md "Zone transfers over TLS") */
      tlsOnly: boolean;
      /** past SOA serials the IXFR journal keeps differences for (0: none; docs/dns.md "Incremental transfers") */
      journalSize: number;
    };
    /** the DNS-over-TLS listener (RFC 7858, XoT RFC 9103); unset: none */
    tls?: { certFile: string; keyFile: string; port: number; listenAddr?: string };
    /** the catalog zone (RFC 9432) listing every served zone; unset: none */
    catalog?: { zone: string };
    update: { enabled: boolean; grants: { key: string; tenant: string; suffixes: string[] }[] };
    tcp: { idleTimeout: string; messageTimeout: string; maxConnections: number; maxConnectionsPerSource: number };
    dnssec: {
      enabled: boolean; algorithm: 'ecdsap256sha256' | 'ed25519';
      keys: { file: string; role: 'ksk' | 'zsk' | 'csk'; state: 'publish' | 'active' | 'retired' }[];
      signatureValidity: string; cacheSize: number;
    };
  };
  database: { path: string };
  api: { enabled: boolean; listenAddr: string; port: number; webuiPath?: string; trustedProxies: string[]; bodyLimit: number; publicURL?: string };
  loadbalancer: {
    algorithm: string; endpoints: string[]; weights: Record<string, number>; ttl: number;
    geoip: { dbPath?: string; endpointLocations: Record<string, { lat: number; lon: number }> };
    mapFile: { rules: { cidr: string; endpoint: string }[] };
    asn: { dbPath?: string; rules: { asn?: number; org?: string; endpoint: string }[] };
  };
  health: HealthFileConfig;
  gitops: {
    repoURL?: string; branch: string; pathPrefix: string; pollInterval: string; requireSignature: boolean;
    allowedSigners: string[]; keyringFile?: string; allowRewind: boolean; webhookSecretEnv?: string;
    verifyAll: boolean; quorum: { path: string; keys: string[]; required: number }[];
    safety: { maxChangePercent: number; minExisting: number };
    /** a query-log sample replayed against every plan, and the share of answers a plan may change (docs/gitops.md "Traffic replay") */
    replayLog?: string; maxChangedTraffic?: number;
    /** health-gated automatic rollback (docs/gitops.md "Automatic rollback"); durations as strings */
    rollback: { enabled: boolean; window: string; checkInterval: string; minHealthyShare: number; maxServfailRate: number; minQueries: number };
    /** a new revision goes to these nodes first and fans out after the bake, unless its signals breach (docs/gitops.md "Canary apply") */
    canary?: { nodes: string[]; bakeTime: string; minHealthyShare: number; maxServfailRate: number; minQueries: number };
    auth: { sshKeyPath?: string; tokenEnv?: string };
  };
  state: {
    healthPolicy: 'prefer-local' | 'local-only' | 'global-any-healthy' | 'global-quorum';
    quorumMinPercent: number; heartbeatInterval: string; heartbeatTTL: string;
    nats: {
      servers: string[]; tls: { caFile?: string; certFile?: string; keyFile?: string };
      auth: { user?: string; password?: string; nkeySeedFile?: string; credsFile?: string }; jetStream: { domain?: string };
    };
    enableConfigSync: boolean;
    config: {
      mode: 'jetstream'; stream: string; subjectPrefix: string; kvBucket: string; applyTimeout: string;
      /** compaction (docs/cluster.md "Compaction"): a snapshot every this many sequences (0: off), or after `snapshotInterval` (a duration; 0s: off), and sequences kept below it */
      snapshotEvery: number; snapshotInterval: string; snapshotKeep: number;
    };
  };
  backup: { enabled: boolean; dir: string; interval: string; keep: number };
  logging: { format: 'json' | 'text'; level: 'debug' | 'info' | 'warn' | 'error' };
  metrics: { enablePrometheus: boolean; listenAddr: string; port: number };
  license: { secret?: string; licenseKey?: string };
  redirect: { enabled: boolean; listenAddr: string; port?: number };
  bgp: {
    enabled: boolean; localASN?: number; routerID?: string; listenAddr: string; listenPort: number; holdTime: string; keepAliveTime: string;
    peers: { remoteASN: number; remoteAddr: string; remotePort: number; password?: string }[]; nodePrefixes: string[];
    poolPrefixes: { poolID: string; prefixes: string[]; withdrawThreshold: number }[];
  };
  auth: {
    sessionTTL: string; sessionExtend: boolean; bcryptCost: number; setupEndpoint: boolean;
    oidc: {
      enabled: boolean; discoveryUrl?: string; clientId?: string; clientSecret?: string; redirectUri?: string; scopes: string[];
      roleClaim: string; roleMapping: Record<string, string>; defaultRole: 'tenant_admin' | 'operator' | 'viewer'; allowedDomains: string[];
    };
  };
  tenancy: {
    operatorTenant: string;
    delegations: { suffix: string; tenant: string }[];
    requireDelegation: boolean;
  };
  alerts: {
    webhooks: { url: string; secret?: string }[];
    oncall_a: { routingKey: string; severity: 'critical' | 'error' | 'warning' | 'info'; baseUrl?: string }[];
    oncall_b: { apiKey: string; priority: 'P1' | 'P2' | 'P3' | 'P4' | 'P5'; region: 'us' | 'eu'; baseUrl?: string }[];
    smtp: SmtpFileConfig[];
    queueSize: number;
    /** folders alert-target secret files may live in (docs/alerts.md "Secrets") */
    secretDirs: string[];
    allowPrivateTargets: string[];
    /** directory of operator mail templates overriding the built-in ones (docs/alerts.md) */
    mailTemplatesDir?: string;
  };
  forms: {
    tiers: Record<string, FormTierConfig>;
    defaultTier: string;
    tenantTiers: Record<string, string>;
    rateLimits: { perKeyPerMinute: number; perIpPerMinute: number };
    intake: { maxBodyBytes: number; maxFileBytes: number; maxFiles: number; maxFields: number };
    files: { dir?: string };
    recaptcha: { secret?: string; verifyURL: string; timeoutMs: number };
    spam: { disposableDomainsFile?: string };
    deliveries: {
      enabled: boolean; pollIntervalMs: number; concurrency: number; retryDelaysMs: number[]; pauseAfterFailures: number;
      timeoutMs: number; maxResponseBytes: number; allowPrivateTargets: string[]; digestCheckMs: number;
    };
    /** the render pool of tenants' templates (docs/forms.md "Templates"); `workers: auto` in the file, resolved at load */
    render: { workers: number; timeoutMs: number; perTenant: number; queuePerTenant: number };
    services: { telegramURL: string; sheetsURL: string; googleTokenURL: string };
    domains: { resolvers: string[]; timeoutMs: number; target?: string; address?: string };
    /** submissions, claims, files and deliveries shared over JetStream (docs/forms.md "In a cluster"); only with `state.nats.servers` */
    cluster: { enabled: boolean; replicas?: number; stream: string; subjectPrefix: string; kvBucket: string; leaseMs: number };
  };
}
