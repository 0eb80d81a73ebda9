import { PARTS } from '../../runtime/parts.js';
import { canaryExtension } from './wiring.js';

/**
 * The canary part: hands canary apply to config sync (`core.ports.configSyncExtension`). Set up
 * before the cluster part, which installs the extension when config sync runs (so the config
 * consumer never reads the stream without the canary gate).
 */
PARTS.push({
  name: 'canary',
  setup(core) {
    core.ports.configSyncExtension = canaryExtension;
  },
});
