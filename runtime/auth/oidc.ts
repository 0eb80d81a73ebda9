import * as client from 'openid-client';
import { GslbError } from '../errors.js';
import type { Config } from '../config/types.js';
import type { NonceStore } from '../ports/sessions.js';
import { hashToken } from './tenant-store.js';

/** How long a single-sign-on state nonce lives (gslb-config-auth.md §8). */
export const STATE_TTL_MS = 10 * 60_000;

type FetchFn = client.CustomFetch;
let fetchOverride: FetchFn | undefined;

/**
 * Replaces the HTTP client used to reach the identity provider (discovery, token, userinfo, JWKS),
 * for example with one that trusts a private CA through an undici Agent. Undefined restores the
 * global fetch. Takes effect for clients created afterwards.
 */
export function setOidcFetch(fn: FetchFn | undefined): void {
  fetchOverride = fn;
}

/** Claims of a signed-in single-sign-on user: ID token claims overlaid with userinfo. */
export type OidcClaims = Record<string, unknown>;

/**
 * The OpenID Connect relying party (authorization code flow with PKCE S256 and a single-use state
 * kept in the NonceStore for 10 minutes). Built by `discoverOidc` at startup.
 */
export class OidcClient {
  constructor(private readonly cfg: client.Configuration, private readonly oidc: Config['auth']['oidc'], private readonly nonces: () => NonceStore) {}

  /** Creates a state and PKCE verifier, stores them, and returns the provider URL to redirect to. */
  async authorizationUrl(): Promise<URL> {
    const state = client.randomState();
    const verifier = client.randomPKCECodeVerifier();
    await this.nonces().put(`oidc:${hashToken(state)}`, verifier, STATE_TTL_MS);
    return client.buildAuthorizationUrl(this.cfg, {
      redirect_uri: this.oidc.redirectUri!,
      scope: this.oidc.scopes.join(' '),
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
  }

  /**
   * Completes a callback: takes the state (single use: a replay or an expired state is refused
   * with 400), exchanges the code, verifies the ID token, and fetches userinfo. Provider errors
   * become 400 (the user's login failed, not the daemon).
   */
  async complete(query: Record<string, string | undefined>): Promise<OidcClaims> {
    const state = query.state;
    if (!state) throw new GslbError('API_BAD_REQUEST', 'missing state');
    const verifier = await this.nonces().take(`oidc:${hashToken(state)}`);
    if (!verifier) throw new GslbError('API_BAD_REQUEST', 'unknown, used or expired sign-in state; start the sign-in again');
    const current = new URL(this.oidc.redirectUri!);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) current.searchParams.set(k, v);
    try {
      const tokens = await client.authorizationCodeGrant(this.cfg, current, { pkceCodeVerifier: verifier, expectedState: state });
      const idClaims = (tokens.claims() ?? {}) as OidcClaims;
      const sub = typeof idClaims.sub === 'string' ? idClaims.sub : client.skipSubjectCheck;
      const info = await client.fetchUserInfo(this.cfg, tokens.access_token, sub);
      return { ...idClaims, ...info };
    } catch (err) {
      throw new GslbError('API_BAD_REQUEST', `single sign-on failed: ${(err as Error).message}`, { cause: err });
    }
  }
}

/**
 * Fetches the provider's OpenID configuration at startup (auth.oidc.discoveryUrl, https only).
 * Throws CONFIG_INVALID naming the URL when it cannot be fetched, so the daemon does not start
 * with a broken sign-on.
 */
export async function discoverOidc(oidc: Config['auth']['oidc'], nonces: () => NonceStore): Promise<OidcClient> {
  const url = new URL(oidc.discoveryUrl!);
  if (url.protocol !== 'https:') throw new GslbError('CONFIG_INVALID', `auth.oidc.discoveryUrl ${oidc.discoveryUrl} must be an https URL`);
  try {
    const opts: client.DiscoveryRequestOptions = { timeout: 10 };
    if (fetchOverride) opts[client.customFetch] = fetchOverride;
    const cfg = await client.discovery(url, oidc.clientId!, oidc.clientSecret!, undefined, opts);
    return new OidcClient(cfg, oidc, nonces);
  } catch (err) {
    throw new GslbError('CONFIG_INVALID', `auth.oidc: discovery at ${oidc.discoveryUrl} failed: ${(err as Error).message}`, { cause: err });
  }
}
