/**
 * Configuration of real secondaries of gslbd on loopback (BIND `named`, Knot `knotd`), for the
 * tests and the bench of zone transfers: the parts every setup shares: where they listen and keep
 * their files, the TSIG key, gslbd as the primary and the ACL that lets its NOTIFY in. Each caller
 * adds its zones (`knotd`: remote `gslbd`, acl `notify-from-gslbd`).
 */

export interface SecondarySetup { dir: string; port: number; primaryPort: number; key: string; secret: string }

/** The head of a knot.conf: server, database, log to stderr, the key, gslbd as remote, the NOTIFY ACL. */
export function knotHead(s: SecondarySetup): string {
  return `
server:
  rundir: "${s.dir}/knot"
  listen: 127.0.0.1@${s.port}
database:
  storage: "${s.dir}/knot"
log:
  - target: stderr
    any: info
key:
  - id: ${s.key}
    algorithm: hmac-sha256
    secret: ${s.secret}
remote:
  - id: gslbd
    address: 127.0.0.1@${s.primaryPort}
    key: ${s.key}
acl:
  - id: notify-from-gslbd
    address: 127.0.0.1
    key: ${s.key}
    action: notify
`;
}

/** The head of a named.conf: options (loopback, no recursion, NOTIFY from loopback) and the key. */
export function namedHead(s: SecondarySetup, extraOptions = ''): string {
  return `
options { directory "${s.dir}"; listen-on port ${s.port} { 127.0.0.1; }; listen-on-v6 { none; }; pid-file none; recursion no; notify no; allow-notify { 127.0.0.1; }; ${extraOptions}};
key "${s.key}" { algorithm hmac-sha256; secret "${s.secret}"; };
`;
}
