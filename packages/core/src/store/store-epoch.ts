/**
 * The store epoch: the second a store's data began. Revocations of JWTs (used-jti
 * markers, revoked families, principal cut-offs) live in the store; when its data is
 * lost (an in-memory store's process restarted, a Redis restarted without persistence
 * or flushed) they are gone, and a logged-out or upgraded JWT would be trusted again.
 * So every JWT issued before the epoch is refused: a store that lost its data starts
 * a new epoch, and everything it could have revoked is void.
 */
import type { CacheRef, CacheStore } from './cache-store.js';

/** Where the epoch is kept (one entry per key prefix). */
export const STORE_EPOCH_REF: CacheRef = Object.freeze(['store-epoch', '']) as CacheRef;

/** The epoch never expires: a lapsed epoch would be restarted and void live JWTs. */
export const STORE_EPOCH_TTL_MS = 100 * 365 * 86_400_000;

/** Now, in the one-second resolution of a JWT's `iat`. */
export function epochSecondsNow(): number {
  return Math.floor(Date.now() / 1000);
}

/**
 * Starts the store's epoch if it has none (first start, or its data was lost) and
 * answers the epoch in force. Atomic: of servers racing to start it, one wins and all
 * answer the same epoch.
 *
 * @example
 * ```ts
 * const since = await establishStoreEpoch(cache);
 * if (claims.iat < since) refuse();
 * ```
 */
export async function establishStoreEpoch(cache: CacheStore): Promise<number> {
  const now = epochSecondsNow();
  const [ns, key] = STORE_EPOCH_REF;
  if (await cache.setIfAbsent(ns, key, now, STORE_EPOCH_TTL_MS)) return now;
  const current = await cache.get<number>(ns, key);
  return typeof current === 'number' ? current : now;
}
