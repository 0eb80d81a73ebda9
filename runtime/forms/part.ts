import { PARTS } from '../parts.js';
import { FormService } from './forms/service.js';
import { FormStore } from './forms/store.js';
import { formRoutes } from './forms/routes/forms.js';
import { formDetailRoutes } from './forms/routes/details.js';
import { actionRoutes } from './forms/routes/actions.js';
import { planRoutes } from './forms/routes/plan.js';
import { FormKeyStore } from './keys/store.js';
import { formKeyRoutes } from './keys/routes.js';
import { KeyRateLimiter } from './public/rate-limit.js';
import { publicApi } from './public/routes/server.js';

/**
 * The form service (docs/forms.md): the workspace's API keys at /api/v1/apikeys, the /public/v1 server at the root of the API (its own keys,
 * scopes, rate limit and `{name, message}` errors) with the form, schema, action and plan routes.
 * Forms and actions are rows, written through `core.apply` like every other row.
 */
PARTS.push({
  name: 'forms',
  setup(core, ext) {
    const svc = new FormService(new FormStore(core), () => core.config.forms);
    const routes = [formRoutes(svc), formDetailRoutes(svc, () => core.config.api.publicURL), actionRoutes(svc), planRoutes(svc)];
    const limiter = new KeyRateLimiter(core.config.forms.rateLimits.perKeyPerMinute);
    const keys = new FormKeyStore(core);
    ext.apiPlugins.push(formKeyRoutes(keys));
    ext.rootPlugins.push(publicApi({ keys, limiter, routes }));
  },
});
