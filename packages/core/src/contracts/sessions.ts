import type { Principal } from './principal.js';
import type { LoginTokenPair } from './tokens.js';

/**
 * The upgrade response, with the expirations as dates.
 *
 * @example
 * ```ts
 * const { accessToken, accessExpiration }: UpgradeResult = await sessions.upgrade(jwt);
 * ```
 */
export interface UpgradeResult {
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly accessExpiration: Date;
  readonly refreshExpiration: Date;
  /** The principal the session acts for. */
  readonly principal: Principal;
}

/**
 * What `refresh` gave back: a new login pair (JWT refresh) or a new session pair.
 *
 * @example
 * ```ts
 * const result = await sessions.refresh(refreshToken);
 * return result.kind === 'login' ? result.pair.accessToken : result.session.accessToken;
 * ```
 */
export type RefreshResult =
  | { readonly kind: 'login'; readonly pair: LoginTokenPair }
  | { readonly kind: 'session'; readonly session: UpgradeResult };

/**
 * Emitted for each revocation (a family revocation may emit two: its JWTs, then its
 * sessions), in this process and (with Redis) on every server sharing the cache. Transports close the connections holding any of these.
 *
 * @example
 * ```ts
 * sessions.onRevocation((event: RevocationEvent) => event.sessionTokens.forEach(closeSocketsHolding));
 * ```
 */
export interface RevocationEvent {
  /** Session access tokens that stopped working. */
  readonly sessionTokens: readonly string[];
  /** `jti`s of JWTs that stopped working (upgrade, logout with a JWT, family revocation): one event per upgrade. */
  readonly jtis: readonly string[];
  /** Login family ids revoked (logout with a JWT, refresh-token reuse): every JWT of those logins stopped working. */
  readonly families?: readonly string[];
  /** Set when every credential of a principal was revoked. */
  readonly principalId?: string;
}

/**
 * Subscribes to revocations; returns the unsubscribe function.
 *
 * @example
 * ```ts
 * const subscribe: RevocationSubscribe = sessions.onRevocation;
 * const off = subscribe((event) => audit.log(event.principalId));
 * off();
 * ```
 */
export type RevocationSubscribe = (listener: (event: RevocationEvent) => void) => () => void;
