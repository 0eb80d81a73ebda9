import type { ConfigSyncExtension } from '../../runtime/cluster/port.js';
import { CanaryCoordinator } from './coordinator.js';
import { isCanaryReport } from './msg.js';
import { canaryPort } from './port.js';
import { CanaryStore } from './store.js';
import { canaryStreamGate } from './stream-gate.js';
import { CanaryWatch } from './watch.js';

/**
 * Canary apply over config sync (docs/gitops.md "Canary apply"), the extension the cluster part
 * calls when config sync runs: the canary gate in the config consumer, this node's canary report
 * in its heartbeats and peers' reports into the watch, the coordinator on the git lease holder
 * (judging as often as canary nodes report, each heartbeat, and at least every second), and
 * `core.ports.canary` for the GitOps controller.
 */
export const canaryExtension: ConfigSyncExtension = (core, ctx) => {
  const { link, names, ledger, metrics, log } = ctx;
  const store = new CanaryStore(core.db);
  const watch = new CanaryWatch(core, store, ctx.live, names.node);
  const gate = canaryStreamGate({ core, ledger, store, timeoutMs: ctx.applyTimeoutMs, self: names.node, onCanaryApplied: (rev) => watch.applied(rev) });
  const coordinator = new CanaryCoordinator({ link, names, lease: ctx.lease, store, watch, metrics, log, tickMs: Math.min(1_000, ctx.heartbeatMs) });
  core.ports.canary = canaryPort({ node: names.node, store, ledger, watch, coordinator, metrics, flush: ctx.flush });
  return {
    gate,
    heartbeat: () => watch.report(),
    heard: (node, report) => watch.heard(node, isCanaryReport(report) ? report : undefined),
    status: () => watch.status(),
    stop: () => coordinator.stop(),
  };
};
