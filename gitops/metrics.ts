import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** The gitops part's Prometheus metrics (prefix gslbd_gitops_). */
export interface GitOpsMetrics {
  fetch: Counter<'result'>;
  verify: Counter<'result'>;
  apply: Counter<'result'>;
  rejected: Counter<'reason'>;
  drift: Counter<string>;
  lastApplyInfo: Gauge<'sha' | 'signer'>;
  ready: Gauge<string>;
  commitToServing: Histogram<'trigger'>;
  reconcileSeconds: Histogram<string>;
  rollbacks: Counter<'result'>;
}

/** Registers the metrics on the daemon's registry. */
export function createGitOpsMetrics(registry: Registry): GitOpsMetrics {
  const registers = [registry];
  return {
    fetch: new Counter({ name: 'gslbd_gitops_fetch_total', help: 'config repo fetches by result', labelNames: ['result'], registers }),
    verify: new Counter({ name: 'gslbd_gitops_verify_total', help: 'commit verifications (signature, ancestry) by result', labelNames: ['result'], registers }),
    apply: new Counter({ name: 'gslbd_gitops_apply_total', help: 'revision applies by result (success, noop, held, invalid, failure)', labelNames: ['result'], registers }),
    rejected: new Counter({ name: 'gslbd_gitops_rejected_total', help: 'revisions refused, by reason', labelNames: ['reason'], registers }),
    drift: new Counter({ name: 'gslbd_gitops_drift_corrected_total', help: 'git-owned rows found changed behind the controller and corrected', registers }),
    lastApplyInfo: new Gauge({ name: 'gslbd_gitops_last_apply_info', help: 'the last applied commit (value 1)', labelNames: ['sha', 'signer'], registers }),
    ready: new Gauge({ name: 'gslbd_gitops_ready', help: '1 when the last reconcile succeeded', registers }),
    commitToServing: new Histogram({
      name: 'gslbd_gitops_commit_to_serving_seconds', help: 'commit time (or webhook receipt) to the snapshot swap', labelNames: ['trigger'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900], registers,
    }),
    rollbacks: new Counter({ name: 'gslbd_gitops_rollbacks_total', help: 'health breaches after an apply, by what was done: success (rolled back), none (no good revision), failure', labelNames: ['result'], registers }),
    reconcileSeconds: new Histogram({ name: 'gslbd_gitops_reconcile_seconds', help: 'duration of one reconcile', buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30], registers }),
  };
}
