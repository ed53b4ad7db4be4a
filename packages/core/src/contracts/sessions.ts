import type { Principal } from './principal.js';
import type { LoginTokenPair } from './tokens.js';

/** The suffix every session token carries: `<uuid v4>;session`. */
export const SESSION_TOKEN_SUFFIX = ';session';

/** The seed's upgrade response, with the expirations as dates. */
export interface UpgradeResult {
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly accessExpiration: Date;
  readonly refreshExpiration: Date;
  /** The principal the session acts for. */
  readonly principal: Principal;
}

/** What `refresh` gave back: a new login pair (JWT refresh) or a new session pair. */
export type RefreshResult =
  | { readonly kind: 'login'; readonly pair: LoginTokenPair }
  | { readonly kind: 'session'; readonly session: UpgradeResult };

/**
 * Emitted once per revocation, in this process and (with Redis) on every server
 * sharing the cache. Transports close the connections holding any of these.
 */
export interface RevocationEvent {
  /** Session access tokens that stopped working. */
  readonly sessionTokens: readonly string[];
  /** `jti`s of JWTs that stopped working (logout with a JWT, family revocation). */
  readonly jtis: readonly string[];
  /** Set when every credential of a principal was revoked. */
  readonly principalId?: string;
}

/** Subscribes to revocations; returns the unsubscribe function. */
export type RevocationSubscribe = (listener: (event: RevocationEvent) => void) => () => void;
