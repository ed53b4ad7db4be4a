/**
 * Verifies portcullis JWTs: the one configured algorithm (HS256 or EdDSA), the key named by
 * `kid`, and every claim rule. Verification is done with node:crypto (HMAC-SHA256 with a
 * constant-time compare, or Ed25519), not jsonwebtoken, which accepts tokens without `exp`,
 * with `crit` headers and with non-object payloads, and throws on bad JSON.
 */
import { timingSafeEqual, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import { MAX_TOKEN_LENGTH } from '@portcullis/protocol';
import { inject, injectable } from 'tsyringe';
import type { PortcullisConfig, SecurityConfig } from '../contracts/portcullis-config.js';
import type { JwtClaims, JwtTokenType, TokenValidationResult, TokenValidator } from '../contracts/tokens.js';
import { PORTCULLIS_CONFIG, SIGNING_KEY } from '../contracts/injection-tokens.js';
import type { SigningKey } from '../contracts/signing-key.js';
import type { TokenFailureReason } from '../errors/error-codes.js';
import { HmacSha256 } from '../key/hmac-sha256.js';
import { principalFromClaims } from './claims.js';
import { checkClaims } from './claim-rules.js';
import { decodeJsonObject, readHeader } from './jwt-header.js';
import { toJwks, type JsonWebKeySet } from './jwks.js';
import { decodeSignature } from './signature-segment.js';


const HEADER_CACHE_LIMIT = 64;
const HEADER_CACHE_MAX_SEGMENT = 256;

type Failure = { readonly ok: false; readonly reason: TokenFailureReason };

/** A header's verdict with the key its `kid` names (the active key when it has none). */
type KeyedHeader = { readonly ok: true; readonly type: JwtTokenType | undefined; readonly key: KeyObject } | Failure;

const FAILURES = new Map<TokenFailureReason, Failure>();

/** One frozen failure object per reason: refusing a token allocates nothing. */
function fail(reason: TokenFailureReason): Failure {
  let failure = FAILURES.get(reason);
  if (!failure) FAILURES.set(reason, (failure = Object.freeze({ ok: false, reason })));
  return failure;
}

/**
 * Validates access and refresh tokens issued by portcullis. `validate` is
 * synchronous and never throws; it answers the verified claims and the principal,
 * or the first rule the token broke, checked in this order:
 *
 * 1. `malformed`: not a string, over {@link MAX_TOKEN_LENGTH}, not three dot-separated parts,
 *    or a header that is not the canonical base64url of a JSON object;
 * 2. `wrong_algorithm`: header `alg` is not exactly the configured `jwt:algorithm` (`HS256` by
 *    default, or `EdDSA`; so `none`, `HS512`, `RS256`, and HS256 in EdDSA mode or the reverse);
 * 3. `unsupported_header`: a `crit`, `jwk`, `jku`, `x5u`, `x5c` or `zip` header;
 * 4. `unknown_key`: a `kid` that names no configured key (a token without `kid` is checked
 *    against the active key only; a `kid` that is not a string is `malformed`);
 * 5. `bad_signature`: the signature segment is not the canonical base64url of a signature of
 *    the algorithm (43 characters for HS256, 86 for EdDSA), or does not verify with the key;
 * 6. `malformed`: the payload is not the canonical base64url (no padding, no stray
 *    characters, spare bits zero) of a JSON object in valid UTF-8;
 * 7. time, with `clock-skew-seconds` of leeway: `exp` required and numeric (`missing_claim`,
 *    `malformed`, `expired`), `nbf` numeric if present (`not_yet_valid`), `iat` required and
 *    numeric, not in the future (`issued_in_future`);
 * 8. `wrong_type`: header `typ` is not `at+jwt` (access) or `refresh+jwt` (refresh);
 * 9. `iss` and `aud` equal to the configured values (`missing_claim`, `wrong_issuer`, `wrong_audience`);
 * 10. `sub` and `jti` non-empty strings, `fam` a string if present (`missing_claim`, `malformed`).
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
  readonly #keys: SigningKey;
  readonly #security: SecurityConfig;
  readonly #headers = new Map<string, KeyedHeader>();
  /** HS256: each verification key, ready to authenticate signing inputs. */
  readonly #hmacs: ReadonlyMap<KeyObject, HmacSha256>;

  constructor(@inject(PORTCULLIS_CONFIG) config: PortcullisConfig, @inject(SIGNING_KEY) key: SigningKey) {
    this.#keys = key;
    this.#security = config.security;
    const hmacKeys = key.algorithm === 'HS256' ? new Set([key.keyObject, ...key.verificationKeys.values()]) : [];
    this.#hmacs = new Map([...hmacKeys].map((keyObject) => [keyObject, new HmacSha256(keyObject)]));
  }

  /**
   * The public keys this validator trusts, as a JWK Set (RFC 7517): the active key first.
   * Undefined in HS256 mode, whose keys are secrets and are never published.
   *
   * @example
   * ```ts
   * const jwks = validator.jwks();
   * if (jwks) res.json(jwks); // GET /auth/jwks.json
   * ```
   */
  jwks(): JsonWebKeySet | undefined {
    return this.#keys.algorithm === 'EdDSA' ? toJwks(this.#keys.verificationKeys) : undefined;
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
    if (firstDot < 1 || lastDot <= firstDot + 1 || token.indexOf('.', firstDot + 1) !== lastDot) return fail('malformed');
    const header = this.#header(token.slice(0, firstDot));
    if (!header.ok) return fail(header.reason);
    if (!this.#signatureMatches(header.key, token.slice(0, lastDot), token.slice(lastDot + 1))) return fail('bad_signature');
    const payload = decodeJsonObject(token.slice(firstDot + 1, lastDot));
    if (!payload) return fail('malformed');
    const broken = checkClaims(payload, header.type, expected, this.#security);
    if (broken) return fail(broken);
    const claims = Object.freeze(payload) as JwtClaims;
    return { ok: true, claims, principal: principalFromClaims(claims, this.#security, 'jwt') };
  }

  #header(segment: string): KeyedHeader {
    let verdict = this.#headers.get(segment);
    if (verdict === undefined) {
      verdict = this.#keyedHeader(segment);
      // Bounded: a stream of distinct forged headers cannot grow memory.
      if (segment.length > HEADER_CACHE_MAX_SEGMENT) return verdict;
      if (this.#headers.size >= HEADER_CACHE_LIMIT) this.#headers.clear();
      this.#headers.set(segment, verdict);
    }
    return verdict;
  }

  #keyedHeader(segment: string): KeyedHeader {
    const header = readHeader(segment, this.#keys.algorithm);
    if (!header.ok) return header;
    const key = header.kid === undefined ? this.#keys.keyObject : this.#keys.verificationKeys.get(header.kid);
    return key ? Object.freeze({ ok: true, type: header.type, key }) : fail('unknown_key');
  }

  #signatureMatches(key: KeyObject, signingInput: string, signature: string): boolean {
    const algorithm = this.#keys.algorithm;
    const presented = decodeSignature(signature, algorithm);
    if (!presented) return false;
    if (algorithm === 'EdDSA') return cryptoVerify(null, Buffer.from(signingInput), key, presented);
    const hmac = this.#hmacs.get(key);
    return hmac !== undefined && timingSafeEqual(hmac.digest(signingInput), presented);
  }
}
