/**
 * Signing shared by {@link AccessTokenIssuer} and {@link JwtTokenIssuer} (HS256 or EdDSA).
 * Only the two `typ` constants are public; the rest is internal. Builds the compact JWS with
 * node:crypto directly: the header (`alg`, `typ`, `kid`) is fixed per token type, so it is encoded once.
 */
import { randomUUID, sign as cryptoSign, type KeyObject } from 'node:crypto';
import type { SigningKey } from '../contracts/signing-key.js';
import type { SecurityConfig } from '../contracts/portcullis-config.js';
import { PortcullisError } from '../errors/portcullis-error.js';
import { HmacSha256 } from '../key/hmac-sha256.js';

/**
 * Header `typ` of an access token (RFC 9068 media type, `application/` omitted).
 *
 * @example
 * ```ts
 * JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString()).typ === ACCESS_TOKEN_TYP;
 * ```
 */
export const ACCESS_TOKEN_TYP = 'at+jwt';
/**
 * Header `typ` of a refresh token; never accepted where an access token is expected.
 *
 * @example
 * ```ts
 * validator.validate(pair.refreshToken, 'refresh'); // checks typ === REFRESH_TOKEN_TYP
 * ```
 */
export const REFRESH_TOKEN_TYP = 'refresh+jwt';

/** The header `typ` values portcullis signs. */
export type JwtTyp = typeof ACCESS_TOKEN_TYP | typeof REFRESH_TOKEN_TYP;

/**
 * Claim names a caller can never set: the registered claims portcullis writes itself,
 * `typ` (reserved for the header), and `__proto__` (never a legitimate claim; refusing it
 * keeps every consumer that copies claims with assignment safe).
 */
export const RESERVED_CLAIMS: ReadonlySet<string> = new Set(['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti', 'fam', 'typ', '__proto__']);

/** Longest lifetime a token may be given: 3650 days, the refresh-token-days maximum. */
export const MAX_LIFETIME_SECONDS = 3650 * 24 * 60 * 60;

/**
 * The longest lifetime of a token of a login, in seconds: its refresh token's
 * (`refresh-token-days`) or its access token's (`access-token-minutes`), whichever is longer.
 * A revoked login's marker lives that long, so a token derived within a login may not live longer.
 */
export function longestLoginTokenSeconds(security: Pick<SecurityConfig, 'refreshTokenDays' | 'accessTokenMinutes'>): number {
  return Math.max(security.refreshTokenDays * 86_400, security.accessTokenMinutes * 60);
}

/** Custom claims after validation: a frozen own copy. */
export type CustomClaims = Readonly<Record<string, unknown>>;

export const NO_CLAIMS: CustomClaims = Object.freeze({});

function invalid(message: string): never {
  throw new PortcullisError('invalid_request', message);
}

/** Throws `invalid_request` unless `subject` is a non-empty string. */
export function assertSubject(subject: unknown): asserts subject is string {
  if (typeof subject !== 'string' || subject.length === 0) invalid('subject must be a non-empty string');
}

/** Throws `invalid_request` unless `seconds` is a whole number from 1 to {@link MAX_LIFETIME_SECONDS}. */
export function assertLifetime(seconds: unknown): asserts seconds is number {
  if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 1 || seconds > MAX_LIFETIME_SECONDS) {
    invalid(`lifetimeSeconds must be an integer from 1 to ${MAX_LIFETIME_SECONDS}`);
  }
}

/**
 * Checks caller claims and returns a frozen copy of what JSON serialisation makes of them.
 * Throws `invalid_request` when `claims` is not a plain object (prototype `Object.prototype`
 * or `null`), has a `toJSON`, is not JSON-serialisable, or serialises to a reserved name.
 * The reserved-name check reads the serialised copy, never the caller's object: a `toJSON`,
 * a getter or a Proxy cannot show one set of names to the check and sign another.
 */
export function toCustomClaims(claims: unknown): CustomClaims {
  if (claims === undefined) return NO_CLAIMS;
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) invalid('claims must be a plain object');
  const prototype: unknown = Object.getPrototypeOf(claims);
  if ((prototype !== Object.prototype && prototype !== null) || 'toJSON' in claims) invalid('claims must be a plain object (prototype Object.prototype or null) without toJSON');
  let copy: unknown;
  try {
    copy = JSON.parse(JSON.stringify(claims));
  } catch {
    invalid('claims must be JSON-serialisable');
  }
  if (typeof copy !== 'object' || copy === null || Array.isArray(copy)) invalid('claims must be a plain object');
  for (const name of Object.keys(copy)) {
    if (RESERVED_CLAIMS.has(name)) invalid(`claim "${name}" is reserved and cannot be set by the caller`);
  }
  return Object.freeze(copy as Record<string, unknown>);
}

/** Merges two validated claim sets; `over` wins on a shared name. */
export function mergeClaims(base: CustomClaims, over: CustomClaims): CustomClaims {
  if (over === NO_CLAIMS) return base;
  if (base === NO_CLAIMS) return over;
  return Object.freeze({ ...base, ...over });
}

/** What {@link JwtSigner.sign} produced. */
export interface SignedJwt {
  readonly token: string;
  readonly jti: string;
  /** `exp` in seconds since the epoch. */
  readonly expiresAt: number;
}

const encodeHeader = (alg: string, typ: JwtTyp, kid: string) => Buffer.from(JSON.stringify({ alg, typ, kid })).toString('base64url');

/** Signs tokens with the active key of a key ring (HS256 or EdDSA), with one issuer and audience. */
export class JwtSigner {
  readonly #key: KeyObject | undefined;
  /** HS256: the signing key, ready to authenticate signing inputs. */
  readonly #hmac: HmacSha256 | undefined;
  readonly #algorithm: SigningKey['algorithm'];
  readonly #headers: Readonly<Record<JwtTyp, string>>;

  constructor(
    key: SigningKey,
    private readonly issuer: string,
    private readonly audience: string,
  ) {
    this.#key = key.signingKeyObject;
    this.#hmac = key.algorithm === 'HS256' && this.#key !== undefined ? new HmacSha256(this.#key) : undefined;
    this.#algorithm = key.algorithm;
    this.#headers = {
      [ACCESS_TOKEN_TYP]: encodeHeader(key.algorithm, ACCESS_TOKEN_TYP, key.kid),
      [REFRESH_TOKEN_TYP]: encodeHeader(key.algorithm, REFRESH_TOKEN_TYP, key.kid),
    };
  }

  /**
   * Signs a token of type `typ`. `claims` must come from {@link toCustomClaims}; the
   * registered claims are written after them so they would win even if a check were missed.
   * Throws `key_rejected` on a verify-only server, which holds no signing key.
   */
  sign(typ: JwtTyp, subject: string, claims: CustomClaims, lifetimeSeconds: number, familyId?: string): SignedJwt {
    const key = this.#key;
    if (key === undefined) throw new PortcullisError('key_rejected', 'this server is verify-only: it holds no signing key and cannot issue tokens');
    const now = Math.floor(Date.now() / 1000);
    const jti = randomUUID();
    const expiresAt = now + lifetimeSeconds;
    const payload: Record<string, unknown> = {
      ...claims,
      iss: this.issuer,
      sub: subject,
      aud: this.audience,
      iat: now,
      nbf: now,
      exp: expiresAt,
      jti,
    };
    if (familyId !== undefined) payload.fam = familyId;
    const signingInput = `${this.#headers[typ]}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
    const signature = this.#hmac === undefined
      ? cryptoSign(null, Buffer.from(signingInput), key).toString('base64url')
      : this.#hmac.digest(signingInput).toString('base64url');
    return { token: `${signingInput}.${signature}`, jti, expiresAt };
  }
}
