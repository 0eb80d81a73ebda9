import { Gauge } from 'prom-client';
import type { Core } from '../app.js';
import { PARTS } from '../parts.js';
import { applyEnvOverrides } from '../config/load.js';
import { evaluateLicense, licenseAt, tierAtLeast, type LicenseState, type Tier } from './license.js';
import { licenseRoutes } from './routes.js';

/** The license in force, for features that need a tier (RUM needs `pro`). */
export interface LicensePort {
  /** the license now (an expiry is applied at the moment of the call) */
  current(): LicenseState;
  /** true when the tier in force is `min` or higher: `core.ports.license?.hasTier('pro') ?? false` */
  hasTier(min: Tier): boolean;
}

declare module '../ports/parts.js' {
  interface Ports {
    /** the license in force (runtime/license, docs/license.md); absent means the free tier */
    license?: LicensePort;
  }
}

// setTimeout's longest delay; a later expiry is waited for in several steps
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Licensing (docs/license.md): verifies `license.licenseKey` with `license.secret` once at setup
 * (environment values win, runtime/config/load.ts applyEnvOverrides) and publishes the result in
 * `core.ports.license`. A bad, wrongly signed or expired license is a warning and the free tier,
 * never a failed start; an expiry while running is logged when it happens. Nothing logged or
 * answered carries the token or the secret. Metrics: `gslbd_license_info{tier,status}` and
 * `gslbd_license_expiry_timestamp_seconds`.
 */
PARTS.push({
  name: 'license',
  async setup(core, ext) {
    const log = core.log.child({ component: 'license' });
    const { secret, licenseKey } = applyEnvOverrides({ ...core.config, license: { ...core.config.license } }, core.env).license;
    const state = await evaluateLicense({ secret, token: licenseKey });
    const port: LicensePort = {
      current: () => licenseAt(state),
      hasTier: (min) => tierAtLeast(licenseAt(state).tier, min),
    };
    core.ports.license = port;
    logLicense(log, state);
    registerMetrics(core, port);
    ext.apiPlugins.push(async (app) => { await app.register(licenseRoutes(port.current)); });
    if (state.status !== 'valid' || state.expiresAt === null) return;
    // one timer, at the expiry: the moment the tier falls back is logged
    let timer: NodeJS.Timeout | undefined;
    const waitForExpiry = () => {
      const left = state.expiresAt! * 1000 - Date.now();
      if (left <= 0) { logLicense(log, port.current()); return; }
      timer = setTimeout(waitForExpiry, Math.min(left + 1, MAX_TIMER_MS));
      timer.unref();
    };
    waitForExpiry();
    core.closers.push(() => clearTimeout(timer));
  },
});

function logLicense(log: Core['log'], s: LicenseState): void {
  const fields = { status: s.status, tier: s.tier, licensedTier: s.licensedTier, licensee: s.licensee, expiresAt: s.expiresAt === null ? null : new Date(s.expiresAt * 1000).toISOString(), reason: s.reason };
  if (s.status === 'valid') log.info(fields, 'license valid');
  else if (s.status === 'none') log.info(fields, 'no license: free tier');
  else log.warn(fields, `license ${s.status}: running at the free tier`);
}

function registerMetrics(core: Core, port: LicensePort): void {
  new Gauge({
    name: 'gslbd_license_info', help: 'The license in force: 1 for its tier and status', labelNames: ['tier', 'status'], registers: [core.metrics],
    collect() { this.reset(); const s = port.current(); this.set({ tier: s.tier, status: s.status }, 1); },
  });
  new Gauge({
    name: 'gslbd_license_expiry_timestamp_seconds', help: 'When the license expires (Unix seconds; 0 without a verified license)', registers: [core.metrics],
    collect() { this.set(port.current().expiresAt ?? 0); },
  });
}
