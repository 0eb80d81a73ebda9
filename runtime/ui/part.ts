import { join } from 'node:path';
import { PARTS } from '../parts.js';
import { PACKAGE_ROOT } from '../paths.js';
import { checkFolder, loadBuiltinAssets } from './assets.js';
import { uiRoutes, type UiSource } from './routes.js';

/** The folder of the built-in dashboard, shipped in the package (hand-written HTML, CSS and ES modules). */
export const BUILTIN_UI_DIR = join(PACKAGE_ROOT, 'webui');

/**
 * The web dashboard (gslb-api.md §1, issue #20) under `/ui/`: the built-in one, or the files of
 * `api.webuiPath` when it is set. A `webuiPath` that is not a readable directory stops the start
 * with a message naming it. docs/ui.md.
 */
PARTS.push({
  name: 'ui',
  setup(core, ext) {
    const dir = core.config.api.webuiPath;
    let source: UiSource;
    if (dir) {
      const why = checkFolder(dir);
      if (why) throw new Error(`api.webuiPath: ${dir}: ${why}`);
      source = { kind: 'folder', root: dir };
      core.log.info({ webuiPath: dir }, 'dashboard served from api.webuiPath');
    } else {
      source = { kind: 'builtin', assets: loadBuiltinAssets(BUILTIN_UI_DIR) };
    }
    ext.rootPlugins.push(uiRoutes(source));
  },
});
