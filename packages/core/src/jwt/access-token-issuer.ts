/**
 * IAccessTokenIssuer: a stateless issuer of short-lived access
 * tokens, injectable anywhere in an application.
 */
import { inject, injectable, type InjectionToken } from 'tsyringe';
import { PORTCULLIS_CONFIG, SIGNING_KEY } from '../contracts/injection-tokens.js';
import type { PortcullisConfig } from '../contracts/portcullis-config.js';
import type { SigningKey } from '../contracts/signing-key.js';
import type { Principal } from '../contracts/principal.js';
import { PortcullisError } from '../errors/portcullis-error.js';
import { principalId } from './claims.js';
import {
  ACCESS_TOKEN_TYP, assertLifetime, assertSubject, JwtSigner, longestLoginTokenSeconds, mergeClaims, NO_CLAIMS, toCustomClaims, type CustomClaims,
} from './jwt-signer.js';

/**
 * An issued access token: the compact JWT and its lifetime (the
 * `ExpiresInSeconds`).
 *
 * @example
 * ```ts
 * const { token, expiresInSeconds } = issuer.issue('player-42');
 * res.json({ accessToken: token, expiresIn: expiresInSeconds });
 * ```
 */
export interface IssuedAccessToken {
  readonly token: string;
  readonly expiresInSeconds: number;
}

/**
 * The `IAccessTokenIssuer` contract. {@link AccessTokenIssuer} implements it;
 * type against this name to substitute a fake in tests.
 *
 * @example
 * ```ts
 * const issued = { token: 't', expiresInSeconds: 60 };
 * const fake: IAccessTokenIssuer = { issue: () => issued, issueForLogin: () => issued, withClaims: () => fake };
 * ```
 */
export interface IAccessTokenIssuer {
  issue(subject: string, claims?: Record<string, unknown>, lifetimeSeconds?: number): IssuedAccessToken;
  issueForLogin(caller: Principal, claims?: Record<string, unknown>, lifetimeSeconds?: number): IssuedAccessToken;
  withClaims(claims: Record<string, unknown>): IAccessTokenIssuer;
}

/**
 * The `IAccessTokenIssuer` name of the access token issuer, as an injection token.
 *
 * @example
 * ```ts
 * @injectable()
 * class Tokens {
 *   constructor(@inject(I_ACCESS_TOKEN_ISSUER) readonly issuer: IAccessTokenIssuer) {}
 * }
 * ```
 */
export const I_ACCESS_TOKEN_ISSUER: InjectionToken<IAccessTokenIssuer> = Symbol.for('portcullis:IAccessTokenIssuer');

/**
 * Issues access tokens (header `typ: at+jwt` and the `kid` of the active key, HS256 or EdDSA) carrying `sub`, the caller's
 * custom claims, a random `jti`, `iat`, `nbf`, `exp`, and the configured `iss`
 * and `aud`. Stateless: every call carries its own claims, and
 * {@link AccessTokenIssuer.withClaims} returns a new issuer instead of changing this one.
 *
 * Custom claims can never overwrite registered ones: a claim named `iss`, `sub`,
 * `aud`, `exp`, `nbf`, `iat`, `jti`, `fam`, `typ` or `__proto__` makes the call throw
 * a `PortcullisError` with code `invalid_request` (nothing is silently dropped).
 *
 * @example
 * ```ts
 * const issuer = container.resolve(AccessTokenIssuer);
 * const { token } = issuer.issue('player-42', { role: 'player' }, 300);
 * const admin = issuer.withClaims({ role: 'admin' }); // `issuer` still has no bound claims
 * ```
 */
@injectable()
export class AccessTokenIssuer implements IAccessTokenIssuer {
  readonly #config: PortcullisConfig;
  readonly #key: SigningKey;
  readonly #signer: JwtSigner;
  readonly #defaultLifetimeSeconds: number;
  readonly #longestLoginSeconds: number;
  #bound: CustomClaims = NO_CLAIMS;

  constructor(@inject(PORTCULLIS_CONFIG) config: PortcullisConfig, @inject(SIGNING_KEY) key: SigningKey) {
    this.#config = config;
    this.#key = key;
    this.#signer = new JwtSigner(key, config.security.issuer, config.security.audience);
    this.#defaultLifetimeSeconds = config.security.accessTokenMinutes * 60;
    this.#longestLoginSeconds = longestLoginTokenSeconds(config.security);
  }

  /** The claims this issuer adds to every token (frozen; empty unless made by `withClaims`). */
  get claims(): Readonly<Record<string, unknown>> {
    return this.#bound;
  }

  /**
   * Issues one access token for `subject`. `claims` are added to the bound claims
   * (the call's value wins on a shared name). `lifetimeSeconds` defaults to
   * `access-token-minutes`; it must be a whole number of seconds from 1 to 3650 days.
   *
   * @throws PortcullisError `invalid_request` for an empty subject, a bad lifetime,
   * claims that are not a JSON-serialisable plain object, or a reserved claim name.
   * @example
   * ```ts
   * issuer.issue('player-42', { name: 'alice' }).expiresInSeconds; // 900 by default
   * ```
   */
  issue(subject: string, claims?: Record<string, unknown>, lifetimeSeconds?: number): IssuedAccessToken {
    assertSubject(subject);
    const lifetime = lifetimeSeconds ?? this.#defaultLifetimeSeconds;
    assertLifetime(lifetime);
    const all = mergeClaims(this.#bound, toCustomClaims(claims));
    const { token } = this.#signer.sign(ACCESS_TOKEN_TYP, subject, all, lifetime);
    return { token, expiresInSeconds: lifetime };
  }

  /**
   * Issues an access token that belongs to the caller's login: it carries the caller's
   * principal id as `sub` and the login family (`fam`) of the credential the caller
   * authenticated with (a login's JWT, a session upgraded from one, or a token derived
   * before). So whatever ends that login ends this token too, and every session upgraded
   * from it: the login's logout, a refresh-token reuse, the deletion of the login, and
   * `revokeAllFor` of the principal. A caller without a login family (a token from
   * {@link issue}) gets a token without one, which only `revokeAllFor` and its expiry end.
   *
   * `lifetimeSeconds` defaults to `access-token-minutes` and may not exceed the login's own
   * longest token (`refresh-token-days`, or `access-token-minutes` when that is longer).
   *
   * @throws PortcullisError `invalid_request` for a caller without a principal id, a bad or
   * too long lifetime, or claims refused as for {@link issue}.
   * @example
   * ```ts
   * @JwtShield @Post('/token')
   * token(req: Request) {
   *   const { token, expiresInSeconds } = tokens.issueForLogin(getPrincipal(req)!, { scope: 'match' }, 300);
   *   return { accessToken: token, expiresIn: expiresInSeconds };
   * }
   * ```
   */
  issueForLogin(caller: Principal, claims?: Record<string, unknown>, lifetimeSeconds?: number): IssuedAccessToken {
    const subject = principalId(caller);
    assertSubject(subject);
    const lifetime = lifetimeSeconds ?? Math.min(this.#defaultLifetimeSeconds, this.#longestLoginSeconds);
    assertLifetime(lifetime);
    if (lifetime > this.#longestLoginSeconds) {
      throw new PortcullisError('invalid_request', `a token derived within a login lives at most ${this.#longestLoginSeconds} seconds (the login's longest token)`);
    }
    const family = caller.claims.fam;
    const all = mergeClaims(this.#bound, toCustomClaims(claims));
    const { token } = this.#signer.sign(ACCESS_TOKEN_TYP, subject, all, lifetime, typeof family === 'string' && family !== '' ? family : undefined);
    return { token, expiresInSeconds: lifetime };
  }

  /**
   * Returns a new issuer whose tokens also carry `claims` (merged over this issuer's
   * bound claims). This issuer is left untouched, so a shared instance is safe.
   *
   * @throws PortcullisError `invalid_request` as for {@link AccessTokenIssuer.issue}.
   * @example
   * ```ts
   * const forGuild = issuer.withClaims({ guild: 'north' });
   * forGuild.issue('player-42'); // carries guild; issuer.issue(...) does not
   * ```
   */
  withClaims(claims: Record<string, unknown>): AccessTokenIssuer {
    const bound = mergeClaims(this.#bound, toCustomClaims(claims));
    const derived = new AccessTokenIssuer(this.#config, this.#key);
    derived.#bound = bound;
    return derived;
  }
}
