import { PARTS } from '../runtime/parts.js';
import { gitopsRoutes } from './routes.js';
import { replayRoutes } from './replay/routes.js';
import { GitOpsController } from './controller.js';
import { followCanary } from './reconcile/canary.js';

/**
 * The gitops part: routes under /api/v1/gitops in setup, the reconcile loop once the API listens
 * (so a first reconcile's events reach listeners that started before it).
 */
const controllers = new WeakMap<object, GitOpsController>();

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
