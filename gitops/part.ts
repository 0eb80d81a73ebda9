import { PARTS } from '../runtime/parts.js';
import type { Core } from '../runtime/app.js';
import { gitopsRoutes } from './routes.js';
import { replayRoutes } from './replay/routes.js';
import { GitOpsController } from './controller.js';

/**
 * The gitops part: routes under /api/v1/gitops in setup, the reconcile loop once the API listens
 * (so a first reconcile's events reach listeners that started before it).
 */
const controllers = new WeakMap<object, GitOpsController>();

/**
 * Runs a reconcile whenever the config stream settles a canary revision here, so the leader's
 * status moves from CanaryBaking to Succeeded or CanaryFailed (with its alert) at once instead of at
 * the next poll. Returns the unsubscribe function.
 */
function followCanary(core: Pick<Core, 'bus'>, ctl: Pick<GitOpsController, 'trigger'>): () => void {
  return core.bus.on('gitops_canary', () => {
    void ctl.trigger({ trigger: { kind: 'poll', receivedAt: Date.now() } })?.catch(() => undefined);
  });
}

/** The GitOps controller of a daemon's core (tests reach its offload worker through it). */
export const gitopsControllerOf = (core: object): GitOpsController | undefined => controllers.get(core);

PARTS.push({
  name: 'gitops',
  setup(core, ext) {
    const ctl = new GitOpsController(core);
    controllers.set(core, ctl);
    ext.apiPlugins.push(async (app) => { await app.register(gitopsRoutes(core, ctl)); await app.register(replayRoutes(core, ctl)); });
  },
  start(core) {
    const ctl = controllers.get(core);
    if (!ctl) return;
    ctl.start();
    const offCanary = followCanary(core, ctl);
    return () => { offCanary(); return ctl.stop(); };
  },
});
