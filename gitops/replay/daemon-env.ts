import type { Core } from '../../runtime/app.js';
import type { ReplayEnv } from './replay.js';

/** What a replay reads on the daemon: its config, the DNS part's geo databases, the live health. */
export function daemonReplayEnv(core: Pick<Core, 'config' | 'health' | 'ports'>): ReplayEnv {
  return { config: core.config, health: core.health, geo: core.ports.dnsGeo ?? { city: undefined, asn: undefined, endpointLocations: {} } };
}
