import type { CanaryStatus } from '../gitops/canary/port.js';
import { when } from './format.js';

/**
 * The `Canary:` line of `gslbctl status` (docs/gitops.md "Canary apply"): the latest canary
 * revision, its phase and nodes, and when it fans out, what it waits for, or why it was aborted.
 */
export function renderCanary(c: CanaryStatus): string {
  const head = `Canary:         ${c.revision.slice(0, 12)} on ${c.nodes.join(', ')}`;
  if (c.phase === 'promoted') return `${head}: promoted at ${when(c.decidedAt)}`;
  if (c.phase === 'aborted') return `${head}: aborted at ${when(c.decidedAt)}: ${c.reason ?? ''}`;
  return `${head}: baking${c.until ? ` until ${when(c.until)}` : ''}${c.reason ? ` (${c.reason})` : ''}`;
}
