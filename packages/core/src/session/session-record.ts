/**
 * What the cache holds for a session pair. Keys are the tokens' SHA-256 digests (`sessionKey`); the access entry lives
 * as long as the access token, the refresh entry as long as the refresh token.
 */
import type { Principal } from '../contracts/principal.js';

/** `session` namespace: one live session access token. */
export interface AccessRecord {
  readonly principal: Principal;
  /** Key of the pair's refresh token. */
  readonly refresh: string;
  /** Login family the session was upgraded from, when the JWT had one. */
  readonly fam?: string;
  /** Epoch ms. */
  readonly accessExpires: number;
}

/** `session-refresh` namespace: one unused session refresh token. */
export interface RefreshRecord {
  readonly principal: Principal;
  /** Key of the pair's access token. */
  readonly access: string;
  /**
   * The pair's access token sealed under the refresh token, so a refresh can seal the new
   * access token for the connections holding the old one. Absent on records of older releases.
   */
  readonly sealedAccess?: string;
  readonly fam?: string;
  /** Epoch ms. */
  readonly refreshExpires: number;
}

function freezeDeep<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) freezeDeep(child);
    Object.freeze(value);
  }
  return value;
}

/**
 * A principal read back from the store, made immutable like one from the validator.
 *
 * @example
 * ```ts
 * const principal = frozenPrincipal(record.principal);
 * ```
 */
export function frozenPrincipal(principal: Principal): Principal {
  return freezeDeep(principal);
}
