import type { Core } from '../app.js';
import { parseDuration } from '../config/duration.js';
import { GslbError } from '../errors.js';
import { ClusterLoginLimiter } from './login-limiter.js';
import type { OidcClient } from './oidc.js';
import { SecretBox } from '../crypto/secret-box.js';
import { SessionService } from './sessions.js';
import { TenantStore } from './tenant-store.js';
import { ResetTokens } from './reset-tokens.js';
import { UserStore } from './user-store.js';

/** Everything the auth routes share; built once by the auth part. */
export interface AuthServices {
  core: Core;
  users: UserStore;
  tenants: TenantStore;
  sessions: SessionService;
  limiter: ClusterLoginLimiter;
  /** undefined while GSLB_SECRET_KEY is unset (TOTP cannot be enrolled then) */
  box: SecretBox | undefined;
  /** set when auth.oidc.enabled and discovery succeeded */
  oidc: OidcClient | undefined;
  resets: ResetTokens;
  ttlMs: number;
  bcryptCost: number;
}

/**
 * Builds the auth services and checks the start conditions of gslb-config-auth.md §2 and §7:
 * GSLB_SECRET_KEY must be a 64-hex key when set, and must be set when a TOTP user exists.
 * Throws CONFIG_INVALID with a message saying what to do.
 */
export function createAuthServices(core: Core): AuthServices {
  const users = new UserStore(core);
  const tenants = new TenantStore(core);
  const secretKey = core.env.GSLB_SECRET_KEY || undefined;
  const box = secretKey ? new SecretBox(secretKey) : undefined;
  if (!box && users.countTotp() > 0) {
    throw new GslbError('CONFIG_INVALID', 'GSLB_SECRET_KEY is unset but users with TOTP exist: set GSLB_SECRET_KEY to the 64-hex key their TOTP secrets were encrypted with');
  }
  const ttlMs = parseDuration(core.config.auth.sessionTTL) ?? 24 * 3_600_000;
  return {
    core, users, tenants, box, oidc: undefined, ttlMs,
    resets: new ResetTokens(() => core.nonces),
    sessions: new SessionService(() => core.sessions, users, ttlMs, core.config.auth.sessionExtend),
    limiter: new ClusterLoginLimiter(() => core.ports.sharedLimits),
    bcryptCost: core.config.auth.bcryptCost,
  };
}
