import type { TokenFailureReason } from '../errors/error-codes.js';
import type { Principal } from './principal.js';

/**
 * The two kinds of JWT portcullis issues; neither is ever accepted as the other.
 *
 * @example
 * ```ts
 * const expected: JwtTokenType = 'refresh';
 * validator.validate(body.refreshToken, expected);
 * ```
 */
export type JwtTokenType = 'access' | 'refresh';

/**
 * Registered and custom claims of a verified JWT, as issued (before any mapping).
 *
 * @example
 * ```ts
 * const result = validator.validate(jwt);
 * if (result.ok) audit.log(result.claims.sub, result.claims.jti);
 * ```
 */
export interface JwtClaims {
  readonly sub: string;
  readonly jti: string;
  readonly iat: number;
  readonly exp: number;
  readonly nbf?: number;
  readonly iss: string;
  readonly aud: string | readonly string[];
  /** Login family id: shared by an access/refresh pair and every rotation of it. */
  readonly fam?: string;
  readonly [claim: string]: unknown;
}

/**
 * What {@link TokenValidator.validate} answers; it never throws.
 *
 * @example
 * ```ts
 * const result: TokenValidationResult = validator.validate(jwt);
 * if (!result.ok) log.info('JWT refused', { reason: result.reason });
 * ```
 */
export type TokenValidationResult =
  | { readonly ok: true; readonly claims: JwtClaims; readonly principal: Principal }
  | { readonly ok: false; readonly reason: TokenFailureReason };

/**
 * Verifies a JWT (signature pinned to HS256, expiry, issuer, audience, type).
 * Synchronous and pure: whether the JWT was invalidated by an upgrade or a logout
 * is the session store's question, asked by `JwtAuth`.
 *
 * @example
 * ```ts
 * const refuseAll: TokenValidator = { validate: () => ({ ok: false, reason: 'revoked' }) };
 * ```
 */
export interface TokenValidator {
  validate(token: string, expected?: JwtTokenType): TokenValidationResult;
}

/**
 * A login's token pair, as `JwtTokenIssuer.issueLoginPair` returns it.
 *
 * @example
 * ```ts
 * const { accessToken, refreshToken, familyId }: LoginTokenPair = issuer.issueLoginPair(account.storageId);
 * ```
 */
export interface LoginTokenPair {
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly familyId: string;
  readonly accessExpiresAt: Date;
  readonly refreshExpiresAt: Date;
}
