/**
 * HS256 signing shared by {@link AccessTokenIssuer} and {@link JwtTokenIssuer}.
 * Only the two `typ` constants are public; the rest is internal. Builds the compact JWS with
 * node:crypto directly: the header is fixed per token type, so it is encoded once.
 */
import { createHmac, randomUUID, type KeyObject } from 'node:crypto';
import type { SecurityConfig } from '../contracts/portcullis-config.js';
import { PortcullisError } from '../errors/portcullis-error.js';

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

const ENCODED_HEADERS: Readonly<Record<JwtTyp, string>> = {
  [ACCESS_TOKEN_TYP]: Buffer.from(JSON.stringify({ alg: 'HS256', typ: ACCESS_TOKEN_TYP })).toString('base64url'),
  [REFRESH_TOKEN_TYP]: Buffer.from(JSON.stringify({ alg: 'HS256', typ: REFRESH_TOKEN_TYP })).toString('base64url'),
};

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
 * Checks caller claims and returns a frozen own copy. Throws `invalid_request` when
 * `claims` is not a plain object, names a reserved claim, or is not JSON-serialisable.
 * Spread (not assignment) copies, so even an own `__proto__` key could not reach a prototype.
 */
export function toCustomClaims(claims: unknown): CustomClaims {
  if (claims === undefined) return NO_CLAIMS;
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) invalid('claims must be a plain object');
  for (const name of Object.keys(claims)) {
    if (RESERVED_CLAIMS.has(name)) invalid(`claim "${name}" is reserved and cannot be set by the caller`);
  }
  try {
    JSON.stringify(claims);
  } catch {
    invalid('claims must be JSON-serialisable');
  }
  return Object.freeze({ ...(claims as Record<string, unknown>) });
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

/** Signs HS256 tokens with one key, issuer and audience. */
export class JwtSigner {
  constructor(
    private readonly key: KeyObject,
    private readonly issuer: string,
    private readonly audience: string,
  ) {}

  /**
   * Signs a token of type `typ`. `claims` must come from {@link toCustomClaims}; the
   * registered claims are written after them so they would win even if a check were missed.
   */
  sign(typ: JwtTyp, subject: string, claims: CustomClaims, lifetimeSeconds: number, familyId?: string): SignedJwt {
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
    const signingInput = `${ENCODED_HEADERS[typ]}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
    const signature = createHmac('sha256', this.key).update(signingInput).digest('base64url');
    return { token: `${signingInput}.${signature}`, jti, expiresAt };
  }
}
