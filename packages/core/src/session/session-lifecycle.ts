import { isSessionToken, SESSION_TOKEN_SUFFIX } from '@portcullis/protocol';
import type { SecurityConfig } from '../contracts/portcullis-config.js';
import type { CredentialsRevoked, RefreshResult, UpgradeResult } from '../contracts/sessions.js';
import type { JwtClaims, JwtTokenType } from '../contracts/tokens.js';
import { PortcullisError, TokenError } from '../errors/portcullis-error.js';
import { principalFromClaims } from '../jwt/claims.js';
import { RESERVED_CLAIMS } from '../jwt/jwt-signer.js';
import type { JwtTokenIssuer } from '../jwt/jwt-token-issuer.js';
import type { JwtTokenValidator } from '../jwt/jwt-token-validator.js';
import type { Logger } from '../contracts/logger.js';
import { describeError } from '../errors/describe-error.js';
import { epochSecondsNow } from '../store/store-epoch.js';
import type { JwtInvalidation } from './jwt-invalidation.js';
import type { LiveLogin, LoginInventory, LoginOrigin } from './login-inventory.js';
import type { RefreshReuse } from './refresh-reuse.js';
import type { RevocationHub } from './revocation-hub.js';
import type { SessionPairStore } from './session-pair-store.js';
import { frozenPrincipal } from './session-record.js';
import type { SessionScripts } from './session-scripts.js';
import { sessionKey } from './session-token.js';
import { openTokenWith, sealTokenUnder } from './token-seal.js';

/** What the write side needs: the token services, the stores and the hub it announces on. */
export interface SessionLifecycleParts {
  readonly security: SecurityConfig;
  readonly validator: JwtTokenValidator;
  readonly issuer: JwtTokenIssuer;
  readonly pairs: SessionPairStore;
  readonly jwts: JwtInvalidation;
  readonly hub: RevocationHub;
  readonly reuse: RefreshReuse;
  readonly logins: LoginInventory;
  readonly logger: Logger;
  /** Present where the store runs scripts (Redis `single`, `sentinel`): each write is then one script. */
  readonly scripts?: SessionScripts | undefined;
}

/** Successors followed, at most, when a reused session refresh token revokes its successor. */
const MAX_CHAIN = 64;
const REUSED = 'token refused: refresh token already used';

/**
 * The write side of sessions: upgrade, refresh and revocation, each announced on
 * the revocation hub so every server drops and closes what it names. Of concurrent
 * writes to one credential exactly one wins; a write that raced a family or
 * principal revocation re-checks the lineage and undoes itself. Where the store runs
 * scripts, an upgrade, a session refresh and a session revocation are one script each
 * (session-scripts.ts): the check, the claim and the writes in one step, so nothing can
 * race them and nothing is re-checked; otherwise (memory, a Redis Cluster) they go step by step.
 *
 * @example
 * ```ts
 * const lifecycle = new SessionLifecycle({ security, validator, issuer, pairs, jwts, hub, logger });
 * const session = await lifecycle.upgrade(jwt);
 * ```
 */
export class SessionLifecycle {
  constructor(private readonly parts: SessionLifecycleParts) {}

  /** See `TokenSessionSync.upgrade`. */
  async upgrade(jwt: string): Promise<UpgradeResult> {
    const { jwts, pairs, hub, security, logins } = this.parts;
    const claims = this.verify(jwt, 'access');
    const scripted = this.parts.scripts === undefined ? undefined : await this.upgradeScripted(claims, this.parts.scripts);
    if (scripted !== undefined) return scripted;
    if (await jwts.isLineageRevoked(claims)) throw new TokenError('revoked');
    if (!(await jwts.claimUse(claims))) throw new TokenError('revoked', 'token refused: already upgraded or revoked');
    let session: UpgradeResult | undefined;
    try {
      session = await pairs.create(principalFromClaims(claims, security, 'session'), claims.fam);
      // A logout or revokeAllFor that ran while the pair was written may have missed it.
      if (await jwts.isLineageRevoked(claims)) throw new TokenError('revoked');
    } catch (error) {
      if (session !== undefined) await pairs.revokeByAccess(session.accessToken).catch(() => undefined);
      // A revoked lineage keeps the JWT spent; any other failure lets the client try again.
      if (!(error instanceof TokenError)) await jwts.releaseUse(claims).catch(() => undefined);
      throw error;
    }
    // Sockets that authenticated with the JWT close, as on logout: their credential is dead.
    await hub.publish({ sessionKeys: [], jtis: [claims.jti] });
    await logins.touch(claims.fam, true);
    await this.trimSessions(session.principal.id);
    return session;
  }

  /** See `TokenSessionSync.refresh`. */
  async refresh(refreshToken: string, principalId?: string): Promise<RefreshResult> {
    if (typeof refreshToken === 'string' && refreshToken.endsWith(SESSION_TOKEN_SUFFIX)) return this.refreshSession(refreshToken, principalId);
    const { jwts, issuer, reuse, logins } = this.parts;
    const claims = this.verify(refreshToken, 'refresh');
    if (principalId !== undefined && claims.sub !== principalId) throw notYours();
    if (await jwts.isLineageRevoked(claims)) throw new TokenError('revoked');
    if (!(await jwts.claimRefresh(claims))) return this.reusedJwt(refreshToken, claims);
    const result: RefreshResult = { kind: 'login', pair: issuer.issueLoginPair(claims.sub, customClaimsOf(claims), claims.fam) };
    await reuse.keepSuccessor(refreshToken, result);
    await logins.touch(claims.fam);
    return result;
  }

  /** See `TokenSessionSync.recordLogin`. */
  async recordLogin(principalId: string, familyId: string, origin: LoginOrigin): Promise<void> {
    const beyond = await this.parts.logins.record(principalId, familyId, origin);
    for (const login of beyond) await this.endLogin(login);
  }

  /** Ends a login everywhere: its JWTs, its session pairs and their sockets, and its record. */
  async endLogin(login: LiveLogin): Promise<void> {
    await this.revokeFamily({ fam: login.fam }, []);
    await this.parts.logins.forget(login.principalId, [login.fam]);
  }

  /** See `TokenSessionSync.revoke`. */
  async revoke(token: string): Promise<boolean> {
    if (typeof token !== 'string') return false;
    const { pairs, hub, validator, jwts } = this.parts;
    if (token.endsWith(SESSION_TOKEN_SUFFIX)) {
      if (this.parts.scripts !== undefined) return this.revokeScripted(token, this.parts.scripts);
      if (await this.revokePair(token)) return true;
      if (!isSessionToken(token)) return false;
      const revoked = await pairs.revokeByRefresh(token);
      if (revoked.length === 0) return false;
      await hub.publish({ sessionKeys: revoked, jtis: [] });
      return true;
    }
    const access = validator.validate(token, 'access');
    const checked = access.ok ? access : validator.validate(token, 'refresh');
    if (!checked.ok) return false;
    await jwts.markUsed(checked.claims);
    await this.revokeFamily(checked.claims, [checked.claims.jti]);
    return true;
  }

  /** See `TokenSessionSync.revokePair`. */
  async revokePair(accessToken: string): Promise<boolean> {
    if (!isSessionToken(accessToken)) return false;
    const revoked = await this.parts.pairs.revokeByAccess(accessToken);
    if (revoked.length > 0) await this.parts.hub.publish({ sessionKeys: revoked, jtis: [] });
    return revoked.length > 0;
  }

  /** See `TokenSessionSync.revokeAllFor`. */
  async revokeAllFor(principalId: string): Promise<number> {
    const { jwts, pairs, hub } = this.parts;
    await jwts.cutOff(principalId);
    const sessionKeys = await pairs.revokeIndexed('principal-sessions', principalId);
    await hub.publish({ sessionKeys, jtis: [], principalId });
    return sessionKeys.length;
  }

  private async refreshSession(refreshToken: string, principalId: string | undefined): Promise<RefreshResult> {
    const { pairs, hub, jwts, reuse, logins, security } = this.parts;
    if (!isSessionToken(refreshToken)) throw new TokenError('malformed');
    const key = sessionKey(refreshToken);
    const markerMs = security.session.refreshDays * 86_400_000;
    // The script checks the owner itself, in the same round trip.
    const scripted = this.parts.scripts === undefined ? undefined : await this.refreshScripted(refreshToken, key, markerMs, principalId, this.parts.scripts);
    if (scripted !== undefined) return scripted;
    if (principalId !== undefined) {
      const owner = (await pairs.findRefresh(refreshToken))?.principal.id;
      if (owner !== undefined && owner !== principalId) throw notYours();
    }
    // The marker is claimed before the pair is taken: of concurrent refreshes on any server one
    // rotates, and every other finds the marker and is answered as a reuse.
    if (!(await reuse.claimSession(key, markerMs))) return this.reusedSession(refreshToken, key, principalId);
    const startedSec = epochSecondsNow();
    let rotated: Awaited<ReturnType<SessionPairStore['rotate']>>;
    try {
      rotated = await pairs.rotate(refreshToken);
    } catch (error) {
      await reuse.releaseSession(key).catch(() => undefined);
      throw error;
    }
    if (!rotated) {
      await reuse.releaseSession(key);
      throw new TokenError('revoked', 'token refused: unknown, expired or already used');
    }
    const { session, replacedAccessKey, replacedAccessToken, fam } = rotated;
    await reuse.recordSession(key, { usedAt: Date.now(), principalId: session.principal.id, next: sessionKey(session.refreshToken) }, markerMs);
    await hub.publish(rotationEvent(replacedAccessKey, replacedAccessToken, session.accessToken));
    const result: RefreshResult = { kind: 'session', session };
    try {
      // A family revocation or revokeAllFor that ran while the new pair was written may have missed it.
      if (await jwts.isLineageRevoked({ sub: session.principal.id, fam, iat: startedSec })) throw new TokenError('revoked');
      await this.trimSessions(session.principal.id);
      await reuse.keepSuccessor(refreshToken, result);
    } catch (error) {
      // The caller does not receive the new pair, and a retry finds no successor kept: nobody
      // could use the pair, so it must not live on until it expires.
      await this.revokePair(session.accessToken).catch(() => undefined);
      throw error;
    }
    await logins.touch(fam);
    return result;
  }

  /** {@link upgrade} as one script; undefined when the store has no epoch, which the step-by-step path starts. */
  private async upgradeScripted(claims: JwtClaims, scripts: SessionScripts): Promise<UpgradeResult | undefined> {
    const { pairs, security } = this.parts;
    const principal = principalFromClaims(claims, security, 'session');
    const draft = pairs.draft();
    let outcome: Awaited<ReturnType<SessionScripts['upgrade']>>;
    try {
      outcome = await scripts.upgrade(claims, principal, draft);
    } catch (error) {
      // The script may have run before the reply was lost: undo what it may have stored, and the
      // spent marker only if it is this attempt's (another upgrade may have won; its JWT stays spent).
      await pairs.revokeByAccess(draft.accessToken).catch(() => undefined);
      await scripts.releaseUpgrade(claims, draft).catch(() => undefined);
      throw error;
    }
    if (outcome.kind !== 'stored') {
      if (outcome.kind === 'no-epoch') return undefined;
      throw outcome.kind === 'used' ? new TokenError('revoked', 'token refused: already upgraded or revoked') : new TokenError('revoked');
    }
    if (outcome.pairsHeld > pairs.limit) await this.trimSessions(principal.id);
    return pairs.result(draft, principal);
  }

  /**
   * {@link refreshSession} as one script; undefined when the step-by-step path must decide (the
   * store has no epoch, or the pair's record is not in the form the script can copy).
   */
  private async refreshScripted(
    refreshToken: string,
    key: string,
    markerMs: number,
    principalId: string | undefined,
    scripts: SessionScripts,
  ): Promise<RefreshResult | undefined> {
    const { pairs, hub, reuse, logger } = this.parts;
    const draft = pairs.draft();
    const outcome = await scripts.refresh(key, draft, markerMs, principalId);
    if (outcome.kind === 'foreign') throw notYours();
    if (outcome.kind === 'reused') return this.reusedSession(refreshToken, key, principalId);
    if (outcome.kind === 'unknown') throw new TokenError('revoked', 'token refused: unknown, expired or already used');
    if (outcome.kind === 'revoked') {
      hub.announce({ sessionKeys: [outcome.replacedAccessKey], jtis: [] });
      throw new TokenError('revoked');
    }
    if (outcome.kind !== 'rotated') return undefined;
    const { record, pairsHeld } = outcome;
    const principal = frozenPrincipal(record.principal);
    const session = pairs.result(draft, principal);
    const replacedAccessToken = record.sealedAccess === undefined ? undefined : openTokenWith('paired access', refreshToken, record.sealedAccess);
    hub.announce(rotationEvent(record.access, replacedAccessToken, session.accessToken));
    if (pairsHeld > pairs.limit) await this.trimSessions(principal.id);
    const result: RefreshResult = { kind: 'session', session };
    // Not waited for: a repeated refresh within the grace waits for it (RefreshReuse.successor).
    reuse.keepSuccessor(refreshToken, result).catch((error: unknown) => logger.warn('could not keep the successor of a refreshed session', describeError(error)));
    return result;
  }

  /** {@link revoke} of a session token as one script. */
  private async revokeScripted(token: string, scripts: SessionScripts): Promise<boolean> {
    if (!isSessionToken(token)) return false;
    return (await scripts.revoke(sessionKey(token))) !== undefined;
  }

  /** A session refresh token presented again: the same successor within the grace, else theft. */
  private async reusedSession(refreshToken: string, key: string, principalId: string | undefined): Promise<RefreshResult> {
    const { reuse, logger } = this.parts;
    const marker = await reuse.usedSession(key);
    if (marker === undefined) throw new TokenError('revoked', 'token refused: unknown, expired or already used');
    if (principalId !== undefined && marker.principalId !== undefined && marker.principalId !== principalId) throw notYours();
    if (reuse.withinGrace(marker.usedAt)) {
      const successor = await reuse.successor(refreshToken);
      if (successor?.kind === 'session') return { kind: 'session', session: { ...successor.session, principal: frozenPrincipal(successor.session.principal) } };
      throw new TokenError('revoked', REUSED);
    }
    // Someone else holds a copy: the pair it was rotated into (or that pair's own successor) ends.
    await this.revokeSuccessorOf(marker.next);
    logger.warn('session refresh token reused; its successor was revoked', { sub: marker.principalId });
    throw new TokenError('revoked', REUSED);
  }

  private async revokeSuccessorOf(next: string | undefined): Promise<void> {
    const { pairs, reuse, hub } = this.parts;
    for (let hops = 0, key = next; key !== undefined && hops < MAX_CHAIN; hops++) {
      const revoked = await pairs.revokeByRefreshKey(key);
      if (revoked.length > 0) return hub.publish({ sessionKeys: revoked, jtis: [] });
      key = (await reuse.usedSession(key))?.next;
    }
  }

  /** A JWT refresh token presented again: the same successor within the grace, else the whole login ends. */
  private async reusedJwt(refreshToken: string, claims: JwtClaims): Promise<RefreshResult> {
    const { jwts, reuse, logger } = this.parts;
    const refreshedAt = await jwts.refreshedAt(claims);
    if (refreshedAt !== undefined && reuse.withinGrace(refreshedAt)) {
      const successor = await reuse.successor(refreshToken);
      if (successor?.kind === 'login') return successor;
      throw new TokenError('revoked', REUSED);
    }
    // Reuse of a rotated refresh token: someone holds a copy, so the whole login ends.
    await this.revokeFamily(claims, []);
    logger.warn('refresh token reused; its login family was revoked', { sub: claims.sub });
    throw new TokenError('revoked', REUSED);
  }

  /**
   * Keeps the principal within `session:max-per-principal`: the oldest pairs beyond it are
   * revoked. The new pair stands even if this fails; the next upgrade or refresh trims again.
   */
  private async trimSessions(principalId: string): Promise<void> {
    try {
      const revoked = await this.parts.pairs.trimToLimit(principalId);
      if (revoked.length > 0) await this.parts.hub.publish({ sessionKeys: revoked, jtis: [] });
    } catch (error) {
      this.parts.logger.warn('could not trim the sessions of a principal to session:max-per-principal', describeError(error));
    }
  }

  private verify(token: string, expected: JwtTokenType): JwtClaims {
    const result = this.parts.validator.validate(token, expected);
    if (!result.ok) throw new TokenError(result.reason);
    return result.claims;
  }

  private async revokeFamily(claims: Pick<JwtClaims, 'fam'>, jtis: string[]): Promise<void> {
    const { jwts, pairs, hub } = this.parts;
    if (claims.fam === undefined) {
      if (jtis.length > 0) await hub.publish({ sessionKeys: [], jtis });
      return;
    }
    await jwts.revokeFamily(claims.fam);
    // The JWTs first, before the family's sessions are looked up: a server that trusts them
    // from its near cache drops them as soon as the marker is written.
    await hub.publish({ sessionKeys: [], jtis, families: [claims.fam] });
    const sessionKeys = await pairs.revokeIndexed('family-sessions', claims.fam);
    if (sessionKeys.length > 0) await hub.publish({ sessionKeys, jtis: [] });
  }
}

/**
 * The event of a session refresh: a continuation, not a revocation. Connections holding the old
 * access token move to the new one, which travels sealed under the old token so the channel
 * never carries a live token. A pair of an older release has no sealed access token
 * (`replacedAccessToken` undefined): its connections close instead.
 */
function rotationEvent(replacedAccessKey: string, replacedAccessToken: string | undefined, accessToken: string): Omit<CredentialsRevoked, 'kind'> {
  if (replacedAccessToken === undefined) return { sessionKeys: [replacedAccessKey], jtis: [] };
  return { sessionKeys: [replacedAccessKey], jtis: [], successors: [{ from: replacedAccessKey, sealed: sealTokenUnder('access successor', replacedAccessToken, accessToken) }] };
}

function notYours(): PortcullisError {
  return new PortcullisError('forbidden', 'the refresh token belongs to another principal');
}

function customClaimsOf(claims: JwtClaims): Record<string, unknown> {
  return Object.fromEntries(Object.entries(claims).filter(([name]) => !RESERVED_CLAIMS.has(name)));
}
