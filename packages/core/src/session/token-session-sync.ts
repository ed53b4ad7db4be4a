/**
 * The token-session sync service: upgrades a JWT to a session token pair, validates
 * session tokens per message, rotates refresh tokens and revokes credentials, in memory
 * or on Redis for a fleet. It puts together three parts: the write side
 * (`SessionLifecycle`), the credential checks with their near caches
 * (`CredentialChecks`) and the revocation hub that feeds both and the listeners.
 */
import { inject, injectable } from 'tsyringe';
import { LOGGER_FACTORY, PORTCULLIS_CONFIG } from '../contracts/injection-tokens.js';
import type { LoggerFactory } from '../contracts/logger.js';
import type { PortcullisConfig } from '../contracts/portcullis-config.js';
import type { Principal } from '../contracts/principal.js';
import type { FleetPush, PushListener, RefreshResult, RevocationSubscribe, UpgradeResult } from '../contracts/sessions.js';
import type { JwtClaims } from '../contracts/tokens.js';
import { longestLoginTokenSeconds, MAX_LIFETIME_SECONDS } from '../jwt/jwt-signer.js';
import { JwtTokenIssuer } from '../jwt/jwt-token-issuer.js';
import { JwtTokenValidator } from '../jwt/jwt-token-validator.js';
import { SessionStores } from '../store/session-stores.js';
import { CredentialChecks } from './credential-checks.js';
import { JwtInvalidation } from './jwt-invalidation.js';
import { RevocationHub } from './revocation-hub.js';
import { SessionLifecycle } from './session-lifecycle.js';
import { SessionPairStore } from './session-pair-store.js';

/** How long the in-memory store's verdicts are kept: a bound on memory, not on staleness. */
const IN_MEMORY_NEAR_CACHE_MS = 60_000;

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
  private readonly lifecycle: SessionLifecycle;
  private readonly checks: CredentialChecks;
  private readonly hub: RevocationHub;
  /** How the connection registry's pushes reach the other servers (on the revocation channel). */
  readonly fleetPush: FleetPush;

  constructor(
    @inject(PORTCULLIS_CONFIG) config: PortcullisConfig,
    validator: JwtTokenValidator,
    issuer: JwtTokenIssuer,
    stores: SessionStores,
    @inject(LOGGER_FACTORY) loggers: LoggerFactory,
  ) {
    const security = config.security;
    const { session, clockSkewSeconds, refreshTokenDays, accessTokenMinutes } = security;
    const lifetimes = stores.options.sessionLifetimesMs;
    const pairs = new SessionPairStore(
      stores.cache,
      { accessMs: lifetimes?.access ?? session.accessMinutes * 60_000, refreshMs: lifetimes?.refresh ?? session.refreshDays * 86_400_000 },
      session.maxPerPrincipal,
    );
    const skewMs = clockSkewSeconds * 1000;
    // A login's tokens (derived ones included) live at most longestLoginTokenSeconds; a principal's
    // may come from AccessTokenIssuer.issue with any lifetime up to MAX_LIFETIME_SECONDS.
    const jwts = new JwtInvalidation(stores.cache, skewMs, {
      familyMs: longestLoginTokenSeconds({ refreshTokenDays, accessTokenMinutes }) * 1000 + skewMs,
      principalMs: MAX_LIFETIME_SECONDS * 1000 + skewMs,
    });
    const bus = stores.cache.revocations;
    // In memory every revocation reaches the near caches synchronously and none is ever lost, so
    // their verdicts are exact and the lifetime only bounds memory (and, for sessions, how often a
    // session in use is read again); on Redis events can be lost, so the lifetime bounds staleness:
    // near-cache-seconds for sessions, the opt-in jwt-near-cache-seconds for JWTs.
    const inMemory = stores.cache.peekMany !== undefined;
    const sessionMs = inMemory && session.nearCacheSeconds > 0 ? IN_MEMORY_NEAR_CACHE_MS : session.nearCacheSeconds * 1000;
    const jwtMs = inMemory ? IN_MEMORY_NEAR_CACHE_MS : session.jwtNearCacheSeconds * 1000;
    const nearCache = { sessionMs, jwtMs };
    const logger = loggers.create('portcullis:sessions');
    this.checks = new CredentialChecks(pairs, jwts, nearCache, () => bus.live);
    this.hub = new RevocationHub(bus, (event) => this.checks.forget(event), logger);
    this.fleetPush = Object.freeze({
      publish: (principalId: string, frameJson: string) => bus.publishPush(principalId, frameJson),
      subscribe: (listener: PushListener) => bus.onPush(listener),
    });
    this.lifecycle = new SessionLifecycle({ security, validator, issuer, pairs, jwts, hub: this.hub, logger });
  }

  /**
   * Subscribes to revocations made here or, with Redis, on any server, and to gaps
   * (`kind: 'gap'`): events may have been missed, so drop anything cached.
   *
   * @example
   * ```ts
   * const off = sessions.onRevocation((e) => { if (e.kind === 'revoked') e.sessionKeys.forEach(closeSocketsHoldingKey); });
   * ```
   */
  get onRevocation(): RevocationSubscribe {
    return this.hub.onRevocation;
  }

  /**
   * Exchanges a valid JWT access token for a session pair. Of any number of concurrent
   * upgrades of one JWT exactly one succeeds; the JWT is invalid from then on, and live
   * sockets that authenticated with it are closed (on every server sharing the store).
   *
   * @throws TokenError for an invalid JWT (reason `revoked` when already upgraded or logged out).
   * @throws PortcullisError `unavailable` when the store cannot be reached.
   */
  upgrade(jwt: string): Promise<UpgradeResult> {
    return this.lifecycle.upgrade(jwt);
  }

  /**
   * The per-message check of a session access token: its principal, or undefined when
   * the token is malformed, unknown, expired or revoked. Malformed tokens never reach the
   * store; a near-cache hit costs a Map lookup; concurrent misses for one token share one read.
   *
   * @throws PortcullisError `unavailable` when the store cannot be reached.
   */
  validate(sessionToken: string): Promise<Principal | undefined> {
    return this.checks.validate(sessionToken);
  }

  /** The principal of a session token if it is in this process's near cache; synchronous, never throws. */
  peek(sessionToken: string): Principal | undefined {
    return this.checks.peek(sessionToken);
  }

  /**
   * Uses up a refresh token. A session refresh token (`…;session`) yields a new session
   * pair and deletes the old pair; a JWT refresh token yields a new login pair of the same
   * family. Presenting a used JWT refresh token again revokes its whole family.
   *
   * @throws TokenError for an unknown, expired, used or wrong-kind token.
   * @throws PortcullisError `unavailable` when the store cannot be reached.
   */
  refresh(refreshToken: string): Promise<RefreshResult> {
    return this.lifecycle.refresh(refreshToken);
  }

  /**
   * True when the JWT was upgraded, rotated or logged out, or its login family or its
   * principal was revoked. Takes verified claims (from `JwtTokenValidator`).
   *
   * @throws PortcullisError `unavailable` when the store cannot be reached.
   */
  isJwtInvalidated(claims: JwtClaims): Promise<boolean> {
    return this.checks.isJwtInvalidated(claims);
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
    return this.checks.isJwtInvalidatedNow(claims);
  }

  /**
   * Revokes a credential: a session access or refresh token revokes its pair; a JWT
   * (access or refresh) is invalidated with its whole login family, including sessions
   * upgraded from it. False when there was nothing (valid) to revoke.
   *
   * @throws PortcullisError `unavailable` when the store cannot be reached.
   */
  revoke(token: string): Promise<boolean> {
    return this.lifecycle.revoke(token);
  }

  /**
   * Revokes the session pair of a session access token. False when it is unknown.
   *
   * @throws PortcullisError `unavailable` when the store cannot be reached.
   */
  revokePair(accessToken: string): Promise<boolean> {
    return this.lifecycle.revokePair(accessToken);
  }

  /**
   * Revokes every credential of a principal: all its session pairs, and every JWT issued
   * to it up to now (including this second). Answers the number of session pairs revoked.
   *
   * @throws PortcullisError `unavailable` when the store cannot be reached.
   */
  revokeAllFor(principalId: string): Promise<number> {
    return this.lifecycle.revokeAllFor(principalId);
  }

  /** Detaches from the revocation bus and drops the near caches. The stores stay open (see `SessionStores.close`). */
  async close(): Promise<void> {
    this.hub.close();
    this.checks.clear();
  }
}
