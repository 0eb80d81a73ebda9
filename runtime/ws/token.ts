import { randomBytes } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';

/** Lifetime of a WebSocket token: long enough to open the socket, short enough not to matter if leaked. */
export const WS_TOKEN_TTL_S = 60;
const AUDIENCE = 'gslbd-ws';

/** What a WebSocket token carries: the tenant whose events the socket may see (null: all). */
export interface WsClaims {
  tenantId: string | null;
  actor: string;
}

/**
 * Issues and verifies the short-lived tokens of `GET /ws/token` (gslb-api.md §4): JWTs signed with
 * HS256 under a random key made per process, so a restart invalidates every outstanding token and
 * tokens of one node are not valid on another (a client asks the node it connects to).
 */
export class WsTokens {
  private readonly key: Uint8Array;
  constructor(private readonly now: () => number = Date.now, key?: Uint8Array) {
    this.key = key ?? randomBytes(32);
  }

  /** A token for the principal; `expiresAt` is integer milliseconds (a whole second). */
  async issue(claims: WsClaims): Promise<{ token: string; expiresAt: number }> {
    const iat = Math.floor(this.now() / 1000);
    const exp = iat + WS_TOKEN_TTL_S;
    const token = await new SignJWT({ tid: claims.tenantId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(claims.actor)
      .setAudience(AUDIENCE)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(this.key);
    return { token, expiresAt: exp * 1000 };
  }

  /** The claims of a valid, unexpired token, or undefined (bad signature, expired, malformed). */
  async verify(token: string): Promise<WsClaims | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        audience: AUDIENCE,
        currentDate: new Date(this.now()),
        clockTolerance: 0,
      });
      const tid = payload.tid;
      return { tenantId: typeof tid === 'string' ? tid : null, actor: payload.sub ?? 'anon' };
    } catch {
      return undefined;
    }
  }
}
