/**
 * The token-session sync service: upgrades a JWT to a session token pair, validates
 * session tokens per message, rotates refresh tokens and revokes credentials, in memory
 * or on Redis for a fleet. It puts together three parts: the write side
 * (`SessionLifecycle`), the credential checks with their near caches
 * (`CredentialChecks`) and the revocation hub that feeds both and the listeners.
 */
import { isSessionToken, type SessionSummary } from '@portcullis/protocol';
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
import { UdpKeyring } from '../key/udp-keyring.js';
import { SessionStores } from '../store/session-stores.js';
import { CredentialChecks } from './credential-checks.js';
import { JwtInvalidation } from './jwt-invalidation.js';
import { LoginInventory, loginSummary, type LoginOrigin } from './login-inventory.js';
import { RefreshReuse } from './refresh-reuse.js';
import { RevocationHub } from './revocation-hub.js';
import { SessionLifecycle } from './session-lifecycle.js';
import { SessionPairStore } from './session-pair-store.js';
import { SessionScripts } from './session-scripts.js';

/** How long the in-memory store's verdicts are kept: a bound on memory, not on staleness. */
const IN_MEMORY_NEAR_CACHE_MS = 60_000;
/** Live logins kept per principal in the session inventory; a new one beyond it ends the oldest. */
const MAX_LOGINS_PER_PRINCIPAL = 64;

/**
 * Who is asking about their logins: the principal and the login (family) of the token
 * that asked, if it has one.
 *
 * @example
 * ```ts
 * const caller: LoginCaller | undefined = await sessions.loginCaller(bearerToken);
 * ```
 */
export interface LoginCaller {
  readonly principalId: string;
  readonly familyId: string | undefined;
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
  private readonly lifecycle: SessionLifecycle;
  private readonly checks: CredentialChecks;
  private readonly hub: RevocationHub;
  private readonly pairs: SessionPairStore;
  private readonly logins: LoginInventory;
  private readonly validator: JwtTokenValidator;
  /** How the connection registry's pushes reach the other servers (on the revocation channel). */
  readonly fleetPush: FleetPush;

  constructor(
    @inject(PORTCULLIS_CONFIG) config: PortcullisConfig,
    validator: JwtTokenValidator,
    issuer: JwtTokenIssuer,
    stores: SessionStores,
    @inject(LOGGER_FACTORY) loggers: LoggerFactory,
    udpKeys: UdpKeyring,
  ) {
    const security = config.security;
    const { session, clockSkewSeconds, refreshTokenDays, accessTokenMinutes } = security;
    const lifetimes = stores.options.sessionLifetimesMs;
    const refreshMs = lifetimes?.refresh ?? session.refreshDays * 86_400_000;
    const pairs = new SessionPairStore(stores.cache, { accessMs: lifetimes?.access ?? session.accessMinutes * 60_000, refreshMs }, udpKeys, session.maxPerPrincipal);
    this.pairs = pairs;
    this.validator = validator;
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
    const nearCache = { sessionMs, jwtMs, gatherMisses: !inMemory };
    const logger = loggers.create('portcullis:sessions');
    this.checks = new CredentialChecks(pairs, jwts, nearCache, () => bus.live);
    this.hub = new RevocationHub(bus, (event) => this.checks.forget(event), logger);
    const reuse = new RefreshReuse(stores.cache, security.refreshReuseGraceSeconds * 1000);
    this.logins = new LoginInventory(stores.cache, Math.max(refreshMs, refreshTokenDays * 86_400_000), MAX_LOGINS_PER_PRINCIPAL);
    this.fleetPush = Object.freeze({
      publish: (principalId: string, frameJson: string) => bus.publishPush(principalId, frameJson),
      subscribe: (listener: PushListener) => bus.onPush(listener),
    });
    const { scripts: run } = stores.cache;
    const scripts = run && bus.fromScripts && new SessionScripts(run, bus.fromScripts, pairs, jwts, this.logins, pairs.lifetimesMs);
    this.lifecycle = new SessionLifecycle({ security, validator, issuer, pairs, jwts, hub: this.hub, reuse, logins: this.logins, logger, scripts });
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
   * {@link validate} for a session named by its UDP `sid` (32 hex digits), as an
   * authenticated datagram names it once its MAC checked out: the same record and
   * near cache, so it is refused the moment its token would be.
   *
   * @throws PortcullisError `unavailable` when the store cannot be reached.
   * @example
   * ```ts
   * const principal = sessions.peekSid(sidHex) ?? (await sessions.validateSid(sidHex));
   * ```
   */
  validateSid(sidHex: string): Promise<Principal | undefined> {
    return this.checks.validateSid(sidHex);
  }

  /** {@link peek} for a session named by its UDP `sid` (hex). */
  peekSid(sidHex: string): Principal | undefined {
    return this.checks.peekSid(sidHex);
  }

  /**
   * Uses up a refresh token. A session refresh token (`…;session`) yields a new session
   * pair and deletes the old pair; the live connections of the old access token go on
   * with the new one, on every server. A JWT refresh token yields a new login pair of the
   * same family. Within `refresh-reuse-grace-seconds` of its first use, a refresh token
   * presented again answers the same successor; past it, the reuse is taken for theft:
   * a JWT refresh token's whole login ends, a session refresh token's successor pair ends.
   *
   * @param principalId when given, a refresh token of another principal is refused with
   *   `forbidden` and nothing is used up (the in-band refresh of a connection).
   * @throws TokenError for an unknown, expired, reused or wrong-kind token.
   * @throws PortcullisError `forbidden` for another principal's token; `unavailable` when the store cannot be reached.
   * @example
   * ```ts
   * const next = await sessions.refresh(session.refreshToken);
   * if (next.kind === 'session') keep(next.session.accessToken, next.session.refreshToken);
   * ```
   */
  refresh(refreshToken: string, principalId?: string): Promise<RefreshResult> {
    return this.lifecycle.refresh(refreshToken, principalId);
  }

  /**
   * Records a new login (a JWT pair's family) in the principal's session inventory, with
   * where it came from. Beyond 64 live logins per principal the oldest is ended.
   *
   * @throws PortcullisError `unavailable` when the store cannot be reached.
   * @example
   * ```ts
   * const pair = issuer.issueLoginPair(account.storageId, claims);
   * await sessions.recordLogin(account.storageId, pair.familyId, { ip: req.ip, userAgent: req.get('user-agent') });
   * ```
   */
  recordLogin(principalId: string, familyId: string, origin: LoginOrigin = {}): Promise<void> {
    return this.lifecycle.recordLogin(principalId, familyId, origin);
  }

  /**
   * The principal and login of a bearer token that a shield accepted (a session access
   * token or a JWT access token); undefined when it is neither any more.
   *
   * @throws PortcullisError `unavailable` when the store cannot be reached.
   * @example
   * ```ts
   * const caller = await sessions.loginCaller(token);
   * if (caller) res.json({ sessions: await sessions.listLogins(caller) });
   * ```
   */
  async loginCaller(token: string): Promise<LoginCaller | undefined> {
    if (isSessionToken(token)) {
      const record = await this.pairs.findAccess(token);
      return record && { principalId: record.principal.id, familyId: record.fam };
    }
    const checked = this.validator.validate(token, 'access');
    return checked.ok ? { principalId: checked.claims.sub, familyId: checked.claims.fam } : undefined;
  }

  /**
   * The caller's live logins, newest first, its own marked `current`.
   *
   * @throws PortcullisError `unavailable` when the store cannot be reached.
   * @example
   * ```ts
   * const sessions = await tokenSessions.listLogins(caller);
   * ```
   */
  async listLogins(caller: LoginCaller): Promise<SessionSummary[]> {
    return (await this.logins.list(caller.principalId)).map((login) => loginSummary(login, caller.familyId));
  }

  /**
   * Ends one login of the caller by its inventory id: its JWTs, its session pairs and
   * their sockets, on every server. False when the id names no live login of the caller.
   *
   * @throws PortcullisError `unavailable` when the store cannot be reached.
   * @example
   * ```ts
   * if (!(await sessions.endLogin(caller, id))) throw new PortcullisError('not_found', 'no such session');
   * ```
   */
  async endLogin(caller: LoginCaller, id: string): Promise<boolean> {
    const login = (await this.logins.list(caller.principalId)).find((candidate) => candidate.id === id);
    if (login === undefined) return false;
    await this.lifecycle.endLogin(login);
    return true;
  }

  /**
   * Ends every login of the caller except its own; answers how many ended.
   *
   * @throws PortcullisError `unavailable` when the store cannot be reached.
   * @example
   * ```ts
   * await sessions.endOtherLogins(caller);
   * ```
   */
  async endOtherLogins(caller: LoginCaller): Promise<number> {
    const others = (await this.logins.list(caller.principalId)).filter((login) => login.fam !== caller.familyId);
    for (const login of others) await this.lifecycle.endLogin(login);
    return others.length;
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
