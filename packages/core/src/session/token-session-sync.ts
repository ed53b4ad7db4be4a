/**
 * The token-session sync service: upgrades a JWT to a session token pair, validates
 * session tokens per message, rotates refresh tokens and revokes credentials, in memory
 * or on Redis for a fleet.
 */
import { isSessionToken, SESSION_TOKEN_SUFFIX } from '@portcullis/protocol';
import { inject, injectable } from 'tsyringe';
import type { PortcullisConfig, SecurityConfig } from '../config/portcullis-config.js';
import type { Principal } from '../contracts/principal.js';
import type { RefreshResult, RevocationEvent, RevocationSubscribe, UpgradeResult } from '../contracts/sessions.js';
import type { JwtClaims, JwtTokenType } from '../contracts/tokens.js';
import { LOGGER_FACTORY, PORTCULLIS_CONFIG } from '../di/tokens.js';
import { describeError } from '../errors/describe-error.js';
import { TokenError } from '../errors/portcullis-error.js';
import { principalFromClaims } from '../jwt/claims.js';
import { RESERVED_CLAIMS } from '../jwt/jwt-signer.js';
import { JwtTokenIssuer } from '../jwt/jwt-token-issuer.js';
import { JwtTokenValidator } from '../jwt/jwt-token-validator.js';
import type { Logger, LoggerFactory } from '../logging/logger.js';
import type { RevocationBus } from '../store/revocation-bus.js';
import { SessionStores } from '../store/session-stores.js';
import { epochSecondsNow } from '../store/store-epoch.js';
import { CoalescedLookups } from './coalesced-lookups.js';
import { JwtInvalidation } from './jwt-invalidation.js';
import { JwtNearCache } from './jwt-near-cache.js';
import { SessionNearCache } from './session-near-cache.js';
import { SessionPairStore } from './session-pair-store.js';
import type { AccessRecord } from './session-record.js';

const GAP_EVENT: RevocationEvent = Object.freeze({ sessionTokens: Object.freeze([]), jtis: Object.freeze([]) });

function customClaimsOf(claims: JwtClaims): Record<string, unknown> {
  return Object.fromEntries(Object.entries(claims).filter(([name]) => !RESERVED_CLAIMS.has(name)));
}

/**
 * Upgrade, validation, refresh and revocation of session tokens, and the invalidation of
 * JWTs. Every store failure surfaces as `PortcullisError('unavailable')` (fail closed).
 *
 * @example
 * ```ts
 * const sessions = container.resolve(TokenSessionSync);
 * const session = await sessions.upgrade(jwt);              // the JWT is invalid from now on
 * const principal = await sessions.validate(session.accessToken);
 * await sessions.revoke(session.accessToken);               // every server refuses it now
 * ```
 */
@injectable()
export class TokenSessionSync {
  private readonly security: SecurityConfig;
  private readonly pairs: SessionPairStore;
  private readonly jwts: JwtInvalidation;
  private readonly near: SessionNearCache;
  /** JWT verdicts, for stores without synchronous reads (Redis); unused in memory. */
  private readonly jwtNear: JwtNearCache;
  private readonly lookups = new CoalescedLookups<AccessRecord | undefined>();
  private readonly bus: RevocationBus;
  private readonly logger: Logger;
  private readonly listeners = new Set<(event: RevocationEvent) => void>();
  private readonly detach: Array<() => void>;
  private generation = 0;
  /** Bumped by every event: a JWT read in flight when one arrives is not near-cached. */
  private jwtGeneration = 0;

  constructor(
    @inject(PORTCULLIS_CONFIG) config: PortcullisConfig,
    private readonly validator: JwtTokenValidator,
    private readonly issuer: JwtTokenIssuer,
    stores: SessionStores,
    @inject(LOGGER_FACTORY) loggers: LoggerFactory,
  ) {
    this.security = config.security;
    const { session, clockSkewSeconds, refreshTokenDays, accessTokenMinutes } = config.security;
    const lifetimes = stores.options.sessionLifetimesMs;
    this.pairs = new SessionPairStore(stores.cache, {
      accessMs: lifetimes?.access ?? session.accessMinutes * 60_000,
      refreshMs: lifetimes?.refresh ?? session.refreshDays * 86_400_000,
    });
    const longestJwtMs = Math.max(refreshTokenDays * 86_400_000, accessTokenMinutes * 60_000);
    this.jwts = new JwtInvalidation(stores.cache, clockSkewSeconds * 1000, longestJwtMs + clockSkewSeconds * 1000);
    this.near = new SessionNearCache(session.nearCacheSeconds * 1000);
    this.jwtNear = new JwtNearCache(stores.cache.peekMany ? 0 : session.jwtNearCacheSeconds * 1000);
    this.bus = stores.cache.revocations;
    this.logger = loggers.create('portcullis:sessions');
    this.detach = [this.bus.subscribe((event) => this.onEvent(event)), this.bus.onGap(() => this.onEvent(GAP_EVENT))];
  }

  /**
   * Subscribes to revocations made here or, with Redis, on any server. An event with no
   * tokens, no families and no principal means events may have been missed: drop anything cached.
   *
   * @example
   * ```ts
   * const off = sessions.onRevocation((e) => e.sessionTokens.forEach((t) => registry.closeHolding(t)));
   * ```
   */
  readonly onRevocation: RevocationSubscribe = (listener) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /**
   * Exchanges a valid JWT access token for a session pair. Of any number of concurrent
   * upgrades of one JWT exactly one succeeds; the JWT is invalid from then on, and live
   * sockets that authenticated with it are closed (on every server sharing the store).
   *
   * @throws TokenError for an invalid JWT (reason `revoked` when already upgraded or logged out).
   * @throws PortcullisError `unavailable` when the store cannot be reached.
   */
  async upgrade(jwt: string): Promise<UpgradeResult> {
    const claims = this.verify(jwt, 'access');
    if (await this.jwts.isLineageRevoked(claims)) throw new TokenError('revoked');
    if (!(await this.jwts.claimUse(claims))) throw new TokenError('revoked', 'token refused: already upgraded or revoked');
    let session: UpgradeResult | undefined;
    try {
      session = await this.pairs.create(principalFromClaims(claims, this.security, 'session'), claims.fam);
      // A logout or revokeAllFor that ran while the pair was written may have missed it.
      if (await this.jwts.isLineageRevoked(claims)) throw new TokenError('revoked');
    } catch (error) {
      if (session !== undefined) await this.pairs.revokeByAccess(session.accessToken).catch(() => undefined);
      // A revoked lineage keeps the JWT spent; any other failure lets the client try again.
      if (!(error instanceof TokenError)) await this.jwts.releaseUse(claims).catch(() => undefined);
      throw error;
    }
    // Sockets that authenticated with the JWT close, as on logout: their credential is dead.
    await this.publish({ sessionTokens: [], jtis: [claims.jti] });
    return session;
  }

  /**
   * The per-message check of a session access token: its principal, or undefined when
   * the token is malformed, unknown, expired or revoked. Malformed tokens never reach the
   * store; a near-cache hit costs a Map lookup; concurrent misses for one token share one read.
   *
   * @throws PortcullisError `unavailable` when the store cannot be reached.
   */
  async validate(sessionToken: string): Promise<Principal | undefined> {
    if (!isSessionToken(sessionToken)) return undefined;
    const cached = this.near.get(sessionToken);
    if (cached !== undefined) return cached;
    const generation = this.generation;
    const record = await this.lookups.run(sessionToken, generation, () => this.pairs.findAccess(sessionToken));
    if (record === undefined) return undefined;
    // Not cached when a revocation arrived during the read, or while fleet events may be missed.
    if (generation === this.generation && this.bus.live) this.near.put(sessionToken, record.principal, record.accessExpires);
    return record.principal;
  }

  /** The principal of a session token if it is in this process's near cache; synchronous, never throws. */
  peek(sessionToken: string): Principal | undefined {
    return this.near.get(sessionToken);
  }

  /**
   * Uses up a refresh token. A session refresh token (`…;session`) yields a new session
   * pair and deletes the old pair; a JWT refresh token yields a new login pair of the same
   * family. Presenting a used JWT refresh token again revokes its whole family.
   *
   * @throws TokenError for an unknown, expired, used or wrong-kind token.
   * @throws PortcullisError `unavailable` when the store cannot be reached.
   */
  async refresh(refreshToken: string): Promise<RefreshResult> {
    if (typeof refreshToken === 'string' && refreshToken.endsWith(SESSION_TOKEN_SUFFIX)) {
      if (!isSessionToken(refreshToken)) throw new TokenError('malformed');
      const startedSec = epochSecondsNow();
      const rotated = await this.pairs.rotate(refreshToken);
      if (!rotated) throw new TokenError('revoked', 'token refused: unknown, expired or already used');
      await this.publish({ sessionTokens: [rotated.replacedAccessToken], jtis: [] });
      // A family revocation or revokeAllFor that ran while the new pair was written may have missed it.
      const lineage = { sub: rotated.session.principal.id, fam: rotated.fam, iat: startedSec };
      if (await this.jwts.isLineageRevoked(lineage)) {
        await this.revokePair(rotated.session.accessToken);
        throw new TokenError('revoked');
      }
      return { kind: 'session', session: rotated.session };
    }
    const claims = this.verify(refreshToken, 'refresh');
    if (await this.jwts.isLineageRevoked(claims)) throw new TokenError('revoked');
    if (!(await this.jwts.claimUse(claims))) {
      // Reuse of a rotated refresh token: someone holds a copy, so the whole login ends.
      await this.revokeFamily(claims, []);
      this.logger.warn('refresh token reused; its login family was revoked', { sub: claims.sub });
      throw new TokenError('revoked', 'token refused: refresh token already used');
    }
    return { kind: 'login', pair: this.issuer.issueLoginPair(claims.sub, customClaimsOf(claims), claims.fam) };
  }

  /**
   * True when the JWT was upgraded, rotated or logged out, or its login family or its
   * principal was revoked. Takes verified claims (from `JwtTokenValidator`).
   *
   * @throws PortcullisError `unavailable` when the store cannot be reached.
   */
  async isJwtInvalidated(claims: JwtClaims): Promise<boolean> {
    if (this.jwtNear.has(claims.jti)) return false;
    const generation = this.jwtGeneration;
    const invalidated = await this.jwts.isInvalidated(claims);
    // Kept only when no revocation arrived during the read and fleet events are flowing.
    if (!invalidated && generation === this.jwtGeneration && this.bus.live) this.jwtNear.keep(claims);
    return invalidated;
  }

  /**
   * {@link isJwtInvalidated} answered without waiting, when the store can (the
   * in-memory provider) or the near cache holds a recent "not invalidated" for this
   * JWT (Redis); undefined when the store must be asked.
   *
   * @example
   * ```ts
   * const now = sessions.isJwtInvalidatedNow(claims);
   * const invalidated = now ?? (await sessions.isJwtInvalidated(claims));
   * ```
   */
  isJwtInvalidatedNow(claims: JwtClaims): boolean | undefined {
    return this.jwts.isInvalidatedNow(claims) ?? (this.jwtNear.has(claims.jti) ? false : undefined);
  }

  /**
   * Revokes a credential: a session access or refresh token revokes its pair; a JWT
   * (access or refresh) is invalidated with its whole login family, including sessions
   * upgraded from it. False when there was nothing (valid) to revoke.
   *
   * @throws PortcullisError `unavailable` when the store cannot be reached.
   */
  async revoke(token: string): Promise<boolean> {
    if (typeof token !== 'string') return false;
    if (token.endsWith(SESSION_TOKEN_SUFFIX)) {
      if (await this.revokePair(token)) return true;
      if (!isSessionToken(token)) return false;
      const revoked = await this.pairs.revokeByRefresh(token);
      if (revoked.length === 0) return false;
      await this.publish({ sessionTokens: revoked, jtis: [] });
      return true;
    }
    const access = this.validator.validate(token, 'access');
    const checked = access.ok ? access : this.validator.validate(token, 'refresh');
    if (!checked.ok) return false;
    await this.jwts.markUsed(checked.claims);
    await this.revokeFamily(checked.claims, [checked.claims.jti]);
    return true;
  }

  /**
   * Revokes the session pair of a session access token. False when it is unknown.
   *
   * @throws PortcullisError `unavailable` when the store cannot be reached.
   */
  async revokePair(accessToken: string): Promise<boolean> {
    if (!isSessionToken(accessToken)) return false;
    const revoked = await this.pairs.revokeByAccess(accessToken);
    if (revoked.length > 0) await this.publish({ sessionTokens: revoked, jtis: [] });
    return revoked.length > 0;
  }

  /**
   * Revokes every credential of a principal: all its session pairs, and every JWT issued
   * to it up to now (including this second). Answers the number of session pairs revoked.
   *
   * @throws PortcullisError `unavailable` when the store cannot be reached.
   */
  async revokeAllFor(principalId: string): Promise<number> {
    await this.jwts.cutOff(principalId);
    const sessionTokens = await this.pairs.revokeIndexed('principal-sessions', principalId);
    await this.publish({ sessionTokens, jtis: [], principalId });
    return sessionTokens.length;
  }

  /** Detaches from the revocation bus and drops the near cache. The stores stay open (see `SessionStores.close`). */
  async close(): Promise<void> {
    for (const off of this.detach) off();
    this.near.clear();
    this.jwtNear.clear();
    this.listeners.clear();
  }

  private verify(token: string, expected: JwtTokenType): JwtClaims {
    const result = this.validator.validate(token, expected);
    if (!result.ok) throw new TokenError(result.reason);
    return result.claims;
  }

  private async revokeFamily(claims: JwtClaims, jtis: string[]): Promise<void> {
    if (claims.fam === undefined) {
      if (jtis.length > 0) await this.publish({ sessionTokens: [], jtis });
      return;
    }
    await this.jwts.revokeFamily(claims.fam);
    // The JWTs first, before the family's sessions are looked up: a server that trusts them
    // from its near cache drops them as soon as the marker is written.
    await this.publish({ sessionTokens: [], jtis, families: [claims.fam] });
    const sessionTokens = await this.pairs.revokeIndexed('family-sessions', claims.fam);
    if (sessionTokens.length > 0) await this.publish({ sessionTokens, jtis: [] });
  }

  private publish(event: RevocationEvent): Promise<void> {
    return this.bus.publish(Object.freeze(event));
  }

  private onEvent(event: RevocationEvent): void {
    // A JWT-only event (upgrade, JWT logout) revokes no session: reads in flight may still be cached.
    if (event === GAP_EVENT || event.sessionTokens.length > 0 || event.principalId !== undefined) this.generation++;
    this.jwtGeneration++;
    if (event === GAP_EVENT) {
      this.near.clear();
      this.jwtNear.clear();
    }
    for (const token of event.sessionTokens) this.near.drop(token);
    for (const jti of event.jtis) this.jwtNear.drop(jti);
    for (const fam of event.families ?? []) this.jwtNear.dropFamily(fam);
    if (event.principalId !== undefined) {
      this.near.dropPrincipal(event.principalId);
      this.jwtNear.dropPrincipal(event.principalId);
    }
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (error) {
        this.logger.error('revocation listener threw', describeError(error));
      }
    }
  }
}
