import { isSessionToken } from '@portcullis/protocol';
import type { Principal } from '../contracts/principal.js';
import type { RevocationEvent } from '../contracts/sessions.js';
import type { JwtClaims } from '../contracts/tokens.js';
import { BackgroundRenewals } from './background-renewals.js';
import { CoalescedLookups } from './coalesced-lookups.js';
import { GatheredReads } from './gathered-reads.js';
import type { JwtInvalidation } from './jwt-invalidation.js';
import { JwtNearCache } from './jwt-near-cache.js';
import { RecentRevocations } from './recent-revocations.js';
import { SessionNearCache } from './session-near-cache.js';
import type { SessionPairStore } from './session-pair-store.js';
import type { AccessRecord } from './session-record.js';
import { sessionKey } from './session-token.js';

/** Session misses (or JWT checks) of one event-loop turn that share one store read, at most. */
const MISS_BATCH = 64;

/**
 * The read side of sessions: the per-message checks of a session token and of a
 * JWT's invalidation, with this process's near caches in front of the store. A
 * verdict is cached only when fleet events are flowing (`live`) and no revocation that
 * names its session or principal arrived while it was read (nor a gap); {@link forget}
 * drops what a revocation names. A session in use (by token, or by UDP `sid`) is read
 * again in the background before its near-cache entry ends ({@link BackgroundRenewals}),
 * gathered for a few milliseconds into one store read for many sessions, a bounded
 * number of reads at a time, so sessions that connected together do not all fall out
 * of the cache, and back onto the store, together: the
 * per-message check stays a Map lookup, and 5,000 sessions cost a few dozen store reads
 * per lifetime, not 5,000.
 * With `gatherMisses` (stores without synchronous reads: Redis), sessions that miss the
 * near cache in one event-loop turn (by token, or by `sid`) share one store read too, and
 * so do the turn's JWT checks, so a server that fell behind and meets thousands of them at
 * once neither fills the store's queue bound nor sends one round trip each.
 *
 * @example
 * ```ts
 * const checks = new CredentialChecks(pairs, jwts, { sessionMs: 5000, jwtMs: 0, gatherMisses: true }, () => bus.live);
 * const principal = checks.peek(token) ?? (await checks.validate(token));
 * ```
 */
export class CredentialChecks {
  private readonly near: SessionNearCache;
  /** The same verdicts for sessions named by their UDP `sid` (hex), as authenticated datagrams name them. */
  private readonly nearBySid: SessionNearCache;
  /** JWT verdicts, for stores without synchronous reads (Redis); unused in memory. */
  private readonly jwtNear: JwtNearCache;
  private readonly lookups = new CoalescedLookups<AccessRecord | undefined>();
  /** How a session missing the near cache is read: alone (a store with synchronous reads), or gathered with the turn's other misses. */
  private readonly findAccess: (token: string) => Promise<AccessRecord | undefined>;
  private readonly findAccessBySid: (sidHex: string) => Promise<AccessRecord | undefined>;
  /** How a JWT missing the near cache is checked: alone, or gathered with the turn's other checks. */
  private readonly readJwtInvalidated: (claims: JwtClaims) => Promise<boolean>;
  /** Session revocations since a read began: its answers for the sessions they name are not cached. */
  private readonly revocations = new RecentRevocations();
  /** Bumped by every event: a JWT read in flight when one arrives is not near-cached. */
  private jwtGeneration = 0;
  private readonly renewals = new BackgroundRenewals((tokens) => this.renewTokens(tokens));
  private readonly sidRenewals = new BackgroundRenewals((sids) => this.renewSids(sids));

  constructor(
    private readonly pairs: SessionPairStore,
    private readonly jwts: JwtInvalidation,
    nearCache: { readonly sessionMs: number; readonly jwtMs: number; readonly gatherMisses?: boolean },
    private readonly live: () => boolean,
  ) {
    if (nearCache.gatherMisses) {
      const gathered = new GatheredReads((tokens: readonly string[]) => pairs.findAccessMany(tokens), MISS_BATCH);
      this.findAccess = (token) => gathered.read(token);
      const gatheredSids = new GatheredReads((sids: readonly string[]) => pairs.findAccessBySidMany(sids), MISS_BATCH);
      this.findAccessBySid = (sid) => gatheredSids.read(sid);
      const gatheredJwts = new GatheredReads((claims: readonly JwtClaims[]) => jwts.isInvalidatedMany(claims), MISS_BATCH);
      this.readJwtInvalidated = (claims) => gatheredJwts.read(claims);
    } else {
      this.findAccess = (token) => pairs.findAccess(token);
      this.findAccessBySid = (sid) => pairs.findAccessBySid(sid);
      this.readJwtInvalidated = (claims) => jwts.isInvalidated(claims);
    }
    this.near = new SessionNearCache(nearCache.sessionMs, undefined, (token) => this.renewals.offer(token));
    this.nearBySid = new SessionNearCache(nearCache.sessionMs, undefined, (sid) => this.sidRenewals.offer(sid));
    this.jwtNear = new JwtNearCache(nearCache.jwtMs);
  }

  /**
   * The principal of a live session access token, or undefined when it is malformed,
   * unknown, expired or revoked. A near-cache hit costs a Map lookup; concurrent
   * misses for one token share one store read (with `gatherMisses`, so do the misses
   * of one event-loop turn, up to 64 sessions a read).
   *
   * @throws PortcullisError `unavailable` when the store cannot be reached.
   */
  async validate(sessionToken: string): Promise<Principal | undefined> {
    if (!isSessionToken(sessionToken)) return undefined;
    const cached = this.near.get(sessionToken);
    if (cached !== undefined) return cached;
    const since = this.revocations.generation;
    const reading = this.lookups.run(sessionToken, since, () => this.findAccess(sessionToken));
    // A caller who joined a read in flight counts from when that read began.
    const readAt = this.lookups.startedAt(sessionToken) ?? Date.now();
    const record = await reading;
    if (record === undefined) return undefined;
    if (!this.overlapsRevocation(since, sessionToken, record.principal.id)) {
      if (this.live()) this.near.put(sessionToken, record.principal, record.accessExpires, readAt);
      return record.principal;
    }
    // A revocation of this session arrived during the read, which may predate it: a connection
    // admitted on that answer would be indexed after the event that should have closed it. Ask once more.
    return (await this.lookups.run(sessionToken, this.revocations.generation, () => this.findAccess(sessionToken)))?.principal;
  }

  /**
   * {@link validate} for a session named by its UDP `sid` (32 hex digits) instead of
   * its token: the same record, the same near-cache rules.
   *
   * @throws PortcullisError `unavailable` when the store cannot be reached.
   */
  async validateSid(sidHex: string): Promise<Principal | undefined> {
    const cached = this.nearBySid.get(sidHex);
    if (cached !== undefined) return cached;
    const since = this.revocations.generation;
    const lookupKey = `sid:${sidHex}`;
    const reading = this.lookups.run(lookupKey, since, () => this.findAccessBySid(sidHex));
    const readAt = this.lookups.startedAt(lookupKey) ?? Date.now();
    const record = await reading;
    if (record === undefined) return undefined;
    // Kept simple for the rarer sid read: any revocation during it, whichever session it names, asks again.
    if (since === this.revocations.generation) {
      if (this.live()) this.nearBySid.put(sidHex, record.principal, record.accessExpires, readAt);
      return record.principal;
    }
    return (await this.lookups.run(lookupKey, this.revocations.generation, () => this.findAccessBySid(sidHex)))?.principal;
  }

  /** The principal of a session named by its UDP `sid` (hex) if the near cache holds it. */
  peekSid(sidHex: string): Principal | undefined {
    return this.nearBySid.get(sidHex);
  }

  /** The principal of a session token if the near cache holds it; synchronous, never throws. */
  peek(sessionToken: string): Principal | undefined {
    return this.near.get(sessionToken);
  }

  /**
   * True when the JWT was upgraded, rotated or logged out, or its login family or
   * principal was revoked. Takes verified claims.
   *
   * @throws PortcullisError `unavailable` when the store cannot be reached.
   */
  async isJwtInvalidated(claims: JwtClaims): Promise<boolean> {
    if (this.jwtNear.has(claims.jti)) return false;
    const generation = this.jwtGeneration;
    const invalidated = await this.readJwtInvalidated(claims);
    if (invalidated) return true;
    if (generation === this.jwtGeneration) {
      if (this.live()) this.jwtNear.keep(claims);
      return false;
    }
    // A revocation arrived during the read, which may predate it (see validate): ask once more.
    return this.readJwtInvalidated(claims);
  }

  /** {@link isJwtInvalidated} without waiting, when the store or the near cache can tell; else undefined. */
  isJwtInvalidatedNow(claims: JwtClaims): boolean | undefined {
    if (this.jwtNear.has(claims.jti)) return false;
    const invalidated = this.jwts.isInvalidatedNow(claims);
    if (invalidated === false && this.live()) this.jwtNear.keep(claims);
    return invalidated;
  }

  /** Drops what a revocation names from the near caches; a gap drops everything. */
  forget(event: RevocationEvent): void {
    this.jwtGeneration++;
    if (event.kind === 'gap') {
      this.revocations.gap();
      this.clear();
      return;
    }
    // A JWT-only event (upgrade, JWT logout) revokes no session: session reads in flight may still be cached.
    if (event.sessionKeys.length > 0 || event.principalId !== undefined) this.revocations.revoked(event.sessionKeys, event.principalId);
    for (const key of event.sessionKeys) {
      this.near.dropAlias(key);
      // A session's UDP sid is the first 16 bytes of the same digest its key spells.
      if (this.nearBySid.size > 0) this.nearBySid.drop(Buffer.from(key, 'base64url').toString('hex', 0, 16));
    }
    for (const jti of event.jtis) this.jwtNear.drop(jti);
    for (const fam of event.families ?? []) this.jwtNear.dropFamily(fam);
    if (event.principalId !== undefined) {
      this.near.dropPrincipal(event.principalId);
      this.nearBySid.dropPrincipal(event.principalId);
      this.jwtNear.dropPrincipal(event.principalId);
    }
  }

  /** Empties the near caches (by token, by `sid`, of JWTs) and forgets the renewals waiting. */
  clear(): void {
    this.renewals.clear();
    this.sidRenewals.clear();
    this.near.clear();
    this.nearBySid.clear();
    this.jwtNear.clear();
  }

  /**
   * True when a revocation that arrived since `since` (the revocation count when the read
   * began) names this session or its principal, or cannot be told apart: its answer may
   * predate the revocation. Hashes the token only when some revocation arrived.
   */
  private overlapsRevocation(since: number, token: string, principalId: string): boolean {
    return since !== this.revocations.generation && this.revocations.mayHaveRevoked(since, sessionKey(token), principalId);
  }

  /** Reads sessions in use again by token (one batch of {@link BackgroundRenewals}) and renews or drops their entries. */
  private renewTokens(tokens: string[]): Promise<void> {
    return this.renewBatch(tokens, (batch) => this.pairs.findAccessMany(batch), this.near, (since, token, record) => this.overlapsRevocation(since, token, record.principal.id));
  }

  /** {@link renewTokens} for sessions named by their UDP `sid`: any revocation during the read keeps nothing, as in {@link validateSid}. */
  private renewSids(sids: string[]): Promise<void> {
    return this.renewBatch(sids, (batch) => this.pairs.findAccessBySidMany(batch), this.nearBySid, (since) => since !== this.revocations.generation);
  }

  private async renewBatch(
    keys: string[],
    read: (keys: string[]) => Promise<Array<AccessRecord | undefined>>,
    near: SessionNearCache,
    overlapped: (since: number, key: string, record: AccessRecord) => boolean,
  ): Promise<void> {
    const since = this.revocations.generation;
    const readAt = Date.now();
    const records = await read(keys);
    if (!this.live()) return;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const record = records[i];
      if (record === undefined) near.drop(key);
      // A revocation of this session during the read may predate it: keep nothing (the entry ends on its own).
      // A record never changes under its key, so a live entry only lives longer: nothing new
      // outlives the read (renewing 5,000 sessions every few seconds must not feed the old generation).
      else if (!overlapped(since, key, record)) near.renew(key, record.principal, record.accessExpires, readAt);
    }
  }
}
