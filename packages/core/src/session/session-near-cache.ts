/**
 * The per-process near cache of validated sessions: the per-message check is a Map lookup
 * and a clock read. Entries live at most `session:near-cache-seconds` (at least four fifths
 * of it) from when their store read began, and never past the token's expiry; revocation events drop them. A session in use
 * is read again from the store ahead of its entry's end. Entries are keyed by the token in
 * this process's memory only, and known by its store key too, which is what revocation
 * events name.
 */
import type { Principal } from '../contracts/principal.js';
import { NearCache, type RenewAhead } from './near-cache.js';
import { sessionKey } from './session-token.js';

/**
 * A bounded map of session token → principal with a short lifetime.
 *
 * @example
 * ```ts
 * const near = new SessionNearCache(5000);
 * near.put(token, principal, accessExpiresMs);
 * near.get(token); // principal, for at most 5 s
 * ```
 */
export class SessionNearCache extends NearCache<Principal> {
  constructor(ttlMs: number, maxEntries?: number, renewAhead?: RenewAhead<Principal>) {
    super(ttlMs, (principal, token) => ({ principal: principal.id, alias: sessionKey(token) }), maxEntries, renewAhead);
  }
}
