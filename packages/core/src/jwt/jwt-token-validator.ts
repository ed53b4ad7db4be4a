/**
 * Verifies portcullis JWTs: HS256 only, with every claim rule of the contract.
 * Verification is done with node:crypto (HMAC-SHA256 and a constant-time compare),
 * not jsonwebtoken, which accepts tokens without `exp`, with `crit` headers and
 * with non-object payloads, and throws on bad JSON.
 */
import { createHmac, timingSafeEqual, type KeyObject } from 'node:crypto';
import { MAX_TOKEN_LENGTH } from '@portcullis/protocol';
import { inject, injectable } from 'tsyringe';
import type { PortcullisConfig, SecurityConfig } from '../contracts/portcullis-config.js';
import type { JwtClaims, JwtTokenType, TokenValidationResult, TokenValidator } from '../contracts/tokens.js';
import { PORTCULLIS_CONFIG, SIGNING_KEY } from '../contracts/injection-tokens.js';
import type { SigningKey } from '../contracts/signing-key.js';
import type { TokenFailureReason } from '../errors/error-codes.js';
import { principalFromClaims } from './claims.js';
import { checkClaims } from './claim-rules.js';
import { readHeader, type HeaderVerdict } from './jwt-header.js';
import { decodeSignature } from './signature-segment.js';


const HEADER_CACHE_LIMIT = 64;
const HEADER_CACHE_MAX_SEGMENT = 256;

type Failure = { readonly ok: false; readonly reason: TokenFailureReason };

const FAILURES = new Map<TokenFailureReason, Failure>();

/** One frozen failure object per reason: refusing a token allocates nothing. */
function fail(reason: TokenFailureReason): Failure {
  let failure = FAILURES.get(reason);
  if (!failure) FAILURES.set(reason, (failure = Object.freeze({ ok: false, reason })));
  return failure;
}

function decodeJsonObject(segment: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Validates access and refresh tokens issued by portcullis. `validate` is
 * synchronous and never throws; it answers the verified claims and the principal,
 * or the first rule the token broke, checked in this order:
 *
 * 1. `malformed`: not a string, over {@link MAX_TOKEN_LENGTH}, not three dot-separated parts,
 *    or a header that is not base64url of a JSON object;
 * 2. `wrong_algorithm`: header `alg` is not exactly `HS256` (so `none`, `HS512`, `RS256`…);
 * 3. `unsupported_header`: a `crit`, `jwk`, `jku`, `x5u`, `x5c` or `zip` header (`kid` is fine);
 * 4. `bad_signature`: the HMAC-SHA256 of the key does not match (compared in constant time);
 * 5. `malformed`: the payload is not a JSON object;
 * 6. time, with `clock-skew-seconds` of leeway: `exp` required and numeric (`missing_claim`,
 *    `malformed`, `expired`), `nbf` numeric if present (`not_yet_valid`), `iat` required and
 *    numeric, not in the future (`issued_in_future`);
 * 7. `wrong_type`: header `typ` is not `at+jwt` (access) or `refresh+jwt` (refresh);
 * 8. `iss` and `aud` equal to the configured values (`missing_claim`, `wrong_issuer`, `wrong_audience`);
 * 9. `sub` and `jti` non-empty strings, `fam` a string if present (`missing_claim`, `malformed`).
 *
 * Reasons are safe to log; before the signature check they only describe the header.
 *
 * @example
 * ```ts
 * const result = container.resolve(JwtTokenValidator).validate(bearer);
 * if (!result.ok) return reply(401, result.reason);
 * result.principal.id; // the sub
 * ```
 */
@injectable()
export class JwtTokenValidator implements TokenValidator {
  readonly #key: KeyObject;
  readonly #security: SecurityConfig;
  readonly #headers = new Map<string, HeaderVerdict>();

  constructor(@inject(PORTCULLIS_CONFIG) config: PortcullisConfig, @inject(SIGNING_KEY) key: SigningKey) {
    this.#key = key.keyObject;
    this.#security = config.security;
  }

  /**
   * Verifies `token` as an `expected` token (`access` by default).
   *
   * @example
   * ```ts
   * const r = validator.validate(body.refreshToken, 'refresh');
   * if (r.ok) rotate(r.claims.fam);
   * ```
   */
  validate(token: string, expected: JwtTokenType = 'access'): TokenValidationResult {
    try {
      return this.#validate(token, expected);
    } catch {
      return fail('malformed');
    }
  }

  #validate(token: string, expected: JwtTokenType): TokenValidationResult {
    if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) return fail('malformed');
    const firstDot = token.indexOf('.');
    const lastDot = token.lastIndexOf('.');
    // The HMAC covers the exact text and the signature must be the canonical encoding,
    // so only the header (cached) needs a charset check: nothing else can pass unsigned.
    if (firstDot < 1 || lastDot <= firstDot + 1 || token.indexOf('.', firstDot + 1) !== lastDot) return fail('malformed');
    const header = this.#header(token.slice(0, firstDot));
    if (!header.ok) return fail(header.reason);
    if (!this.#signatureMatches(token.slice(0, lastDot), token.slice(lastDot + 1))) return fail('bad_signature');
    const payload = decodeJsonObject(token.slice(firstDot + 1, lastDot));
    if (!payload) return fail('malformed');
    const broken = checkClaims(payload, header.type, expected, this.#security);
    if (broken) return fail(broken);
    const claims = Object.freeze(payload) as JwtClaims;
    return { ok: true, claims, principal: principalFromClaims(claims, this.#security, 'jwt') };
  }

  #header(segment: string): HeaderVerdict {
    let verdict = this.#headers.get(segment);
    if (verdict === undefined) {
      verdict = readHeader(segment);
      // Bounded: a stream of distinct forged headers cannot grow memory.
      if (segment.length > HEADER_CACHE_MAX_SEGMENT) return verdict;
      if (this.#headers.size >= HEADER_CACHE_LIMIT) this.#headers.clear();
      this.#headers.set(segment, verdict);
    }
    return verdict;
  }

  #signatureMatches(signingInput: string, signature: string): boolean {
    const presented = decodeSignature(signature, 'HS256');
    if (!presented) return false;
    return timingSafeEqual(createHmac('sha256', this.#key).update(signingInput).digest(), presented);
  }
}
