/**
 * The codes of portcullis in one place: the wire codes of `@portcullis/protocol`,
 * the few that never leave the server, and the named subsets the shields, the
 * adapters and the token validator use. No other file declares a code union.
 */
import type { ErrorCode, WireErrorCode } from '@portcullis/protocol';

/**
 * Every code a {@link PortcullisError} can carry: the wire codes of
 * `@portcullis/protocol` (`ErrorCode`), and three that never reach a client as
 * such (`config_invalid` and `key_rejected` stop start-up, `invalid_password` is
 * answered `invalid_request`).
 *
 * @example
 * ```ts
 * const code: PortcullisErrorCode = error instanceof PortcullisError ? error.code : 'internal';
 * ```
 */
export type PortcullisErrorCode = ErrorCode | 'config_invalid' | 'key_rejected' | 'invalid_password';

/**
 * A refusal's code: no or bad credential, not enough rights, a backing store is
 * down, or the caller is over a `@RateLimit`.
 *
 * @example
 * ```ts
 * const statusOf: Record<RefusalCode, number> = { unauthorized: 401, forbidden: 403, unavailable: 503, rate_limited: 429 };
 * ```
 */
export type RefusalCode = Extract<WireErrorCode, 'unauthorized' | 'forbidden' | 'unavailable' | 'rate_limited'>;

/**
 * Reasons a JWT is refused; carried by {@link TokenError} and validation results.
 * They refine the one code `invalid_token` and are safe to log.
 *
 * @example
 * ```ts
 * const result = validator.validate(jwt);
 * if (!result.ok && result.reason === 'expired') await client.refresh();
 * ```
 */
export type TokenFailureReason =
  | 'malformed'
  | 'bad_signature'
  | 'wrong_algorithm'
  | 'unknown_key'
  | 'unsupported_header'
  | 'expired'
  | 'not_yet_valid'
  | 'issued_in_future'
  | 'missing_claim'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'wrong_type'
  | 'revoked';
