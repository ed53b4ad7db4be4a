/**
 * Issues the login pair: an access token and a refresh token that are told apart
 * by their header `typ`, so neither is ever accepted as the other (RFC 8725 §3.11).
 */
import { randomUUID } from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import type { PortcullisConfig } from '../contracts/portcullis-config.js';
import type { LoginTokenPair } from '../contracts/tokens.js';
import { PortcullisError } from '../errors/portcullis-error.js';
import { PORTCULLIS_CONFIG, SIGNING_KEY } from '../contracts/injection-tokens.js';
import type { SigningKey } from '../contracts/signing-key.js';
import { ACCESS_TOKEN_TYP, assertSubject, JwtSigner, REFRESH_TOKEN_TYP, toCustomClaims } from './jwt-signer.js';

/**
 * A login pair with the `jti` of each token, for the session store (upgrade marks
 * the access `jti` used, refresh rotation marks the refresh `jti` used).
 *
 * @example
 * ```ts
 * const { accessToken, refreshToken } = pair; // the login response
 * ```
 */
export type IssuedLoginPair = LoginTokenPair & { readonly accessJti: string; readonly refreshJti: string };

/**
 * Issues login token pairs. The access token has header `typ: at+jwt` and lives
 * `access-token-minutes`; the refresh token has `typ: refresh+jwt` and lives
 * `refresh-token-days`. Both carry `sub`, the custom claims (so a refresh can mint
 * an equal access token without asking the account store), their own random `jti`,
 * and the same `fam` (login family id) that refresh rotation and reuse detection use.
 * Claim rules are those of {@link AccessTokenIssuer}: reserved names throw `invalid_request`.
 *
 * @example
 * ```ts
 * const pair = container.resolve(JwtTokenIssuer).issueLoginPair(account.storageId, { name: account.username });
 * res.json({ accessToken: pair.accessToken, refreshToken: pair.refreshToken });
 * ```
 */
@injectable()
export class JwtTokenIssuer {
  readonly #signer: JwtSigner;
  readonly #accessSeconds: number;
  readonly #refreshSeconds: number;

  constructor(@inject(PORTCULLIS_CONFIG) config: PortcullisConfig, @inject(SIGNING_KEY) key: SigningKey) {
    this.#signer = new JwtSigner(key, config.security.issuer, config.security.audience);
    this.#accessSeconds = config.security.accessTokenMinutes * 60;
    this.#refreshSeconds = config.security.refreshTokenDays * 24 * 60 * 60;
  }

  /**
   * Issues an access and a refresh token for `subject`. `familyId` keeps a refresh
   * rotation in the login's family; a new UUID is used when it is not given.
   *
   * @throws PortcullisError `invalid_request` for an empty subject or family id,
   * or claims that are not a JSON-serialisable plain object or name a reserved claim.
   * @example
   * ```ts
   * const next = issuer.issueLoginPair(claims.sub, custom, claims.fam); // refresh rotation
   * ```
   */
  issueLoginPair(subject: string, claims?: Record<string, unknown>, familyId?: string): IssuedLoginPair {
    assertSubject(subject);
    if (familyId !== undefined && (typeof familyId !== 'string' || familyId.length === 0)) {
      throw new PortcullisError('invalid_request', 'familyId must be a non-empty string');
    }
    const custom = toCustomClaims(claims);
    const fam = familyId ?? randomUUID();
    const access = this.#signer.sign(ACCESS_TOKEN_TYP, subject, custom, this.#accessSeconds, fam);
    const refresh = this.#signer.sign(REFRESH_TOKEN_TYP, subject, custom, this.#refreshSeconds, fam);
    return {
      accessToken: access.token,
      refreshToken: refresh.token,
      familyId: fam,
      accessExpiresAt: new Date(access.expiresAt * 1000),
      refreshExpiresAt: new Date(refresh.expiresAt * 1000),
      accessJti: access.jti,
      refreshJti: refresh.jti,
    };
  }
}
