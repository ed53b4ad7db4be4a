/**
 * The per-process near cache of JWT verdicts, for stores that cannot answer without a
 * round trip (Redis): a JWT found not invalidated is trusted for a short while, so a
 * `@JwtShield` request costs a Map lookup instead of an `MGET`. Revocation events drop
 * the entries they name (by `jti`, login family or principal), as they do sessions.
 */
import type { JwtClaims } from '../contracts/tokens.js';
import { NearCache } from './near-cache.js';

/**
 * `jti` → the claims of a JWT found not invalidated, never kept past its `exp`.
 *
 * @example
 * ```ts
 * const near = new JwtNearCache(5000);
 * if (!(await jwts.isInvalidated(claims))) near.keep(claims);
 * near.has(claims.jti); // true for at most 5 s, and never past the JWT's exp
 * ```
 */
export class JwtNearCache extends NearCache<JwtClaims> {
  constructor(ttlMs: number, maxEntries?: number) {
    super(ttlMs, (claims) => ({ principal: claims.sub, family: typeof claims.fam === 'string' ? claims.fam : undefined }), maxEntries);
  }

  /** True while the JWT was found not invalidated and no event has named it since. */
  has(jti: string): boolean {
    return this.get(jti) !== undefined;
  }

  /** Remembers a JWT found not invalidated. */
  keep(claims: JwtClaims): void {
    this.put(claims.jti, claims, claims.exp * 1000);
  }
}
