import type { AlertEvent } from './events.js';

/**
 * The id of an event that belongs to the cluster, or null for one that belongs to this node
 * (docs/alerts.md "Once per cluster"). Rejections, rollbacks and applied git revisions are events
 * of the shared config: whichever node sees one (the git leader, or a new leader repeating a
 * rejection after a takeover), one alert goes out. Health flips are this node's own probes:
 * each node alerts on what it sees. Pure.
 */
export function clusterEventId(ev: AlertEvent): string | null {
  switch (ev.type) {
    case 'health_transition': return null;
    case 'gitops_rejected': return `gitops_rejected:${ev.revision}:${ev.reason}`;
    case 'gitops_rollback': return `gitops_rollback:${ev.revision}:${ev.result}`;
    case 'gitops_applied': return `gitops_applied:${ev.revision}`;
  }
}
