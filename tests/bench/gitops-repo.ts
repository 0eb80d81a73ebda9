/** Options of the generated repo. */
export interface RepoOptions {
  /**
   * Each pool's TCP health check (default true). Its members (10.x.y.z:443) exist nowhere: where a
   * test answers queries while the checks run, the answers would depend on the host's routing (no
   * route: refused at once, members unhealthy; a route: unanswered until the timeout), so such a
   * test turns them off.
   */
  healthChecks?: boolean;
}

/** Rows one service of `repoFiles` makes: its own, and a tenth of its pool's (pool, 4 members, the check). */
export const rowsPerService = (o: RepoOptions = {}): number => (o.healthChecks === false ? 1.5 : 1.6);

/**
 * The config repo the GitOps benchmarks generate (`bench:gitops`, `bench:reconcile`): one pool per
 * 10 services, each with 4 members and a TCP health check (1.6 rows per service), 100 documents
 * per file. `ttl` is the TTL of every 100th service, so `repoFiles(n, 30)` on top of `repoFiles(n)`
 * is a 1 % update.
 */
export function repoFiles(services: number, ttl = 60, o: RepoOptions = {}): { path: string; text: string }[] {
  const pools = Math.max(1, Math.ceil(services / 10));
  const files: { path: string; text: string }[] = [];
  const per = 100;
  for (let f = 0; f * per < pools; f++) {
    const docs: string[] = [];
    for (let p = f * per; p < Math.min(pools, (f + 1) * per); p++) {
      const b = `10.${(p >> 8) & 255}.${p & 255}`;
      const check = o.healthChecks === false ? '' : '  healthCheck: {type: tcp, port: 443, intervalMs: 10000}\n';
      docs.push(`apiVersion: gslb/v1\nkind: Pool\nmetadata: {name: pool-${p}}\nspec:\n  members:\n${[1, 2, 3, 4].map((i) => `    - {ipAddress: ${b}.${i}, port: 443, weight: ${i}}`).join('\n')}\n${check}`);
    }
    files.push({ path: `pools/pools-${f}.yaml`, text: docs.join('---\n') });
  }
  for (let f = 0; f * per < services; f++) {
    const docs: string[] = [];
    for (let s = f * per; s < Math.min(services, (f + 1) * per); s++) {
      docs.push(`apiVersion: gslb/v1\nkind: Service\nmetadata: {name: svc-${s}}\nspec: {domain: svc-${s}.bench.test., pool: pool-${Math.floor(s / 10)}, algorithm: wrr, ttl: ${s % 100 === 0 ? ttl : 60}}\n`);
    }
    files.push({ path: `services/services-${f}.yaml`, text: docs.join('---\n') });
  }
  return files;
}
