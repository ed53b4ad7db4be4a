import { isSessionToken, SESSION_TOKEN_SUFFIX } from '@portcullis/protocol';
import type { SecurityConfig } from '../contracts/portcullis-config.js';
import type { RefreshResult, UpgradeResult } from '../contracts/sessions.js';
import type { JwtClaims, JwtTokenType } from '../contracts/tokens.js';
import { TokenError } from '../errors/portcullis-error.js';
import { principalFromClaims } from '../jwt/claims.js';
import { RESERVED_CLAIMS } from '../jwt/jwt-signer.js';
import type { JwtTokenIssuer } from '../jwt/jwt-token-issuer.js';
import type { JwtTokenValidator } from '../jwt/jwt-token-validator.js';
import type { Logger } from '../contracts/logger.js';
import { describeError } from '../errors/describe-error.js';
import { epochSecondsNow } from '../store/store-epoch.js';
import type { JwtInvalidation } from './jwt-invalidation.js';
import type { RevocationHub } from './revocation-hub.js';
import type { SessionPairStore } from './session-pair-store.js';

/** What the write side needs: the token services, the stores and the hub it announces on. */
export interface SessionLifecycleParts {
  readonly security: SecurityConfig;
  readonly validator: JwtTokenValidator;
  readonly issuer: JwtTokenIssuer;
  readonly pairs: SessionPairStore;
  readonly jwts: JwtInvalidation;
  readonly hub: RevocationHub;
  readonly logger: Logger;
}

/**
 * The write side of sessions: upgrade, refresh and revocation, each announced on
 * the revocation hub so every server drops and closes what it names. Of concurrent
 * writes to one credential exactly one wins; a write that raced a family or
 * principal revocation re-checks the lineage and undoes itself.
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
    const { jwts, pairs, hub, security } = this.parts;
    const claims = this.verify(jwt, 'access');
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
    await this.trimSessions(session.principal.id);
    return session;
  }

  /** See `TokenSessionSync.refresh`. */
  async refresh(refreshToken: string): Promise<RefreshResult> {
    if (typeof refreshToken === 'string' && refreshToken.endsWith(SESSION_TOKEN_SUFFIX)) return this.refreshSession(refreshToken);
    const { jwts, issuer, logger } = this.parts;
    const claims = this.verify(refreshToken, 'refresh');
    if (await jwts.isLineageRevoked(claims)) throw new TokenError('revoked');
    if (!(await jwts.claimUse(claims))) {
      // Reuse of a rotated refresh token: someone holds a copy, so the whole login ends.
      await this.revokeFamily(claims, []);
      logger.warn('refresh token reused; its login family was revoked', { sub: claims.sub });
      throw new TokenError('revoked', 'token refused: refresh token already used');
    }
    return { kind: 'login', pair: issuer.issueLoginPair(claims.sub, customClaimsOf(claims), claims.fam) };
  }

  /** See `TokenSessionSync.revoke`. */
  async revoke(token: string): Promise<boolean> {
    if (typeof token !== 'string') return false;
    const { pairs, hub, validator, jwts } = this.parts;
    if (token.endsWith(SESSION_TOKEN_SUFFIX)) {
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

  private async refreshSession(refreshToken: string): Promise<RefreshResult> {
    const { pairs, hub, jwts } = this.parts;
    if (!isSessionToken(refreshToken)) throw new TokenError('malformed');
    const startedSec = epochSecondsNow();
    const rotated = await pairs.rotate(refreshToken);
    if (!rotated) throw new TokenError('revoked', 'token refused: unknown, expired or already used');
    await hub.publish({ sessionKeys: [rotated.replacedAccessKey], jtis: [] });
    // A family revocation or revokeAllFor that ran while the new pair was written may have missed it.
    const lineage = { sub: rotated.session.principal.id, fam: rotated.fam, iat: startedSec };
    if (await jwts.isLineageRevoked(lineage)) {
      await this.revokePair(rotated.session.accessToken);
      throw new TokenError('revoked');
    }
    await this.trimSessions(rotated.session.principal.id);
    return { kind: 'session', session: rotated.session };
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

  private async revokeFamily(claims: JwtClaims, jtis: string[]): Promise<void> {
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

function customClaimsOf(claims: JwtClaims): Record<string, unknown> {
  return Object.fromEntries(Object.entries(claims).filter(([name]) => !RESERVED_CLAIMS.has(name)));
}
