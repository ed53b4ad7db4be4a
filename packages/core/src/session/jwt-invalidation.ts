/**
 * Makes stateless JWTs revocable: a marker per used `jti` (upgraded, rotated or logged
 * out) until the token expires, a marker per revoked login family, and a per-principal
 * cut-off time for "revoke everything of this principal". JWTs issued before the store's
 * epoch are refused, because the markers that could have revoked them may be lost.
 */
import type { JwtClaims } from '../contracts/tokens.js';
import type { CacheRef, CacheStore } from '../store/cache-store.js';
import { epochSecondsNow, establishStoreEpoch, STORE_EPOCH_REF } from '../store/store-epoch.js';

/** What a revocation of a login family or of a principal is checked against. */
export type Lineage = Pick<JwtClaims, 'sub' | 'iat' | 'fam'>;

/**
 * How long revocation markers live: each must outlive every token it covers.
 *
 * @example
 * ```ts
 * const lifetimes: LineageMarkerLifetimes = { familyMs: 7 * 86_400_000, principalMs: 3650 * 86_400_000 };
 * ```
 */
export interface LineageMarkerLifetimes {
  /** A revoked login family: the longest token of a login (derived tokens included) plus skew. */
  readonly familyMs: number;
  /** A `revokeAllFor` cut-off: the longest token any issuer may sign for a principal plus skew. */
  readonly principalMs: number;
}

/**
 * The JWT side of the session store.
 *
 * @example
 * ```ts
 * const jwts = new JwtInvalidation(cache, 30_000, { familyMs: 7 * 86_400_000, principalMs: 3650 * 86_400_000 });
 * if (!(await jwts.claimUse(claims))) throw new TokenError('revoked');
 * ```
 */
export class JwtInvalidation {
  /**
   * @param skewMs `clock-skew-seconds`: a JWT is accepted that long past `exp`, so markers outlive it by as much.
   * @param lifetimes how long family and principal markers must live.
   */
  constructor(
    private readonly cache: CacheStore,
    private readonly skewMs: number,
    private readonly lifetimes: LineageMarkerLifetimes,
  ) {}

  /** Marks the `jti` used until the token expires; true only for the one caller that did. */
  claimUse(claims: JwtClaims): Promise<boolean> {
    return this.cache.setIfAbsent('used-jwt', claims.jti, true, this.markerTtlMs(claims));
  }

  /** Marks a refresh token's `jti` used with the time of the refresh; true only for the one caller that did. */
  claimRefresh(claims: JwtClaims): Promise<boolean> {
    return this.cache.setIfAbsent('used-jwt', claims.jti, { refreshedAt: Date.now() }, this.markerTtlMs(claims));
  }

  /** When a refresh token was used for a refresh (epoch ms); undefined when unused, or spent otherwise (logout). */
  async refreshedAt(claims: JwtClaims): Promise<number | undefined> {
    const marker = await this.cache.get<{ refreshedAt?: unknown }>('used-jwt', claims.jti);
    return typeof marker?.refreshedAt === 'number' ? marker.refreshedAt : undefined;
  }

  /** Undoes {@link claimUse} after a failure further on, so the token can be tried again. */
  async releaseUse(claims: JwtClaims): Promise<void> {
    await this.cache.delete('used-jwt', claims.jti);
  }

  /** Marks the `jti` used (logout), whether or not it was before. */
  markUsed(claims: JwtClaims): Promise<void> {
    return this.cache.set('used-jwt', claims.jti, true, this.markerTtlMs(claims));
  }

  revokeFamily(familyId: string): Promise<void> {
    return this.cache.set('revoked-family', familyId, true, this.lifetimes.familyMs);
  }

  /** Refuses every JWT of the principal issued up to now (iat has one-second resolution, so this second too). */
  cutOff(principalId: string): Promise<void> {
    return this.cache.set('principal-cutoff', principalId, epochSecondsNow(), this.lifetimes.principalMs);
  }

  /** True when the `jti` was used, or its family or principal revoked, or it predates the store's data. One round trip. */
  async isInvalidated(claims: JwtClaims): Promise<boolean> {
    return (await this.isInvalidatedMany([claims]))[0]!;
  }

  /**
   * {@link isInvalidated} for many JWTs in one store read (one `MGET` on a single Redis),
   * the store epoch read once for all of them (and, when the store has none, started once);
   * the answers in the order of `claims`.
   */
  async isInvalidatedMany(claims: readonly JwtClaims[]): Promise<boolean[]> {
    const perJwt = claims.map((c) => this.refs(c, true).slice(1));
    const values = await this.read([STORE_EPOCH_REF, ...perJwt.flat()]);
    let at = 1;
    let newEpoch: Promise<number> | undefined; // no epoch: one is started for the whole batch
    return Promise.all(
      claims.map(async (c, i) => {
        const own = values.slice(at, (at += perJwt[i]!.length));
        return this.decide([values[0], ...own], c, true) ?? c.iat < (await (newEpoch ??= establishStoreEpoch(this.cache)));
      }),
    );
  }

  /**
   * {@link isInvalidated} answered at once when the store keeps its data in this
   * process (memory) and has its epoch; undefined when only `isInvalidated` can tell.
   */
  isInvalidatedNow(claims: JwtClaims): boolean | undefined {
    const refs = this.refs(claims, true);
    const values = this.cache.peekMany?.(refs);
    // A short answer is left to isInvalidated, which refuses it.
    return values === undefined || values.length !== refs.length ? undefined : this.decide(values, claims, true);
  }

  /**
   * Like {@link isInvalidated} without the `jti` marker: the family or principal was revoked
   * (at or after `iat`), or the store lost its data since. Takes a JWT's claims, or the
   * lineage of a session pair (its principal, family and when it was made).
   */
  async isLineageRevoked(lineage: Lineage): Promise<boolean> {
    return this.decide(await this.read(this.refs(lineage, false)), lineage, false) ?? this.predatesNewEpoch(lineage);
  }

  /**
   * The verdict on the values read for {@link refs} (same order); undefined when the
   * store has no epoch, which only a write can settle.
   */
  private decide(values: readonly unknown[], claims: Lineage, withJti: boolean): boolean | undefined {
    let i = 0;
    const epoch = values[i++];
    const used = withJti ? values[i++] : undefined;
    const cutoff = values[i++];
    const family = typeof claims.fam === 'string' ? values[i] : undefined;
    if (used !== undefined || family !== undefined || this.cutOffCovers(cutoff, claims)) return true;
    return typeof epoch === 'number' ? claims.iat < epoch : undefined;
  }

  /**
   * The markers, one value per ref. A short answer (a store adapter's bug, not an outage)
   * would read a missing marker as "not revoked": it fails closed instead, with an error
   * the shield enforcer logs and answers `unavailable`.
   *
   * @throws TypeError when the store answers another number of values.
   */
  private async read(refs: readonly CacheRef[]): Promise<readonly unknown[]> {
    const values = await this.cache.getMany(refs);
    if (values.length !== refs.length) throw new TypeError(`the store answered ${values.length} values for ${refs.length} keys`);
    return values;
  }

  /** No epoch: the store is new or lost its data (revocations included); start one now. */
  private async predatesNewEpoch(claims: Lineage): Promise<boolean> {
    return claims.iat < (await establishStoreEpoch(this.cache));
  }

  /** What to read, in this order: the store epoch, the `jti` marker if asked for, the principal cut-off, the family marker if the JWT has a family. */
  private refs(claims: Lineage & { readonly jti?: string }, withJti: boolean): CacheRef[] {
    const refs: CacheRef[] = [STORE_EPOCH_REF];
    if (withJti) refs.push(['used-jwt', claims.jti!]);
    refs.push(['principal-cutoff', claims.sub]);
    if (typeof claims.fam === 'string') refs.push(['revoked-family', claims.fam]);
    return refs;
  }

  private cutOffCovers(cutoff: unknown, claims: Lineage): boolean {
    return typeof cutoff === 'number' && claims.iat <= cutoff;
  }

  /** How long the `used-jwt` marker of a token lives: until it expires, plus the clock skew. */
  markerTtlMs(claims: JwtClaims): number {
    return Math.max(1000, claims.exp * 1000 + this.skewMs - Date.now());
  }
}
