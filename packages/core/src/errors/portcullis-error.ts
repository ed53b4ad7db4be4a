/**
 * The one error type of portcullis. Adapters map `code` to an HTTP status or a
 * wire error code through a single table each; nothing matches on messages.
 */

/**
 * Every code a {@link PortcullisError} can carry.
 *
 * @example
 * ```ts
 * const code: PortcullisErrorCode = error instanceof PortcullisError ? error.code : 'internal';
 * ```
 */
export type PortcullisErrorCode =
  | 'config_invalid'
  | 'key_rejected'
  | 'invalid_token'
  | 'unauthorized'
  | 'forbidden'
  | 'invalid_request'
  | 'invalid_credentials'
  | 'invalid_password'
  | 'conflict'
  | 'locked_out'
  | 'captcha_failed'
  | 'unavailable'
  | 'not_found'
  | 'bad_request'
  | 'internal';

/**
 * Base error with a closed `code` and an optional `cause`. Messages never hold a
 * token, password, hash or key.
 *
 * @example
 * ```ts
 * try { loadConfig(); } catch (e) {
 *   if (e instanceof PortcullisError && e.code === 'config_invalid') process.exit(1);
 * }
 * ```
 */
export class PortcullisError extends Error {
  readonly code: PortcullisErrorCode;

  constructor(code: PortcullisErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PortcullisError';
    this.code = code;
  }
}

/**
 * Reasons a JWT is refused; carried by {@link TokenError} and validation results.
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
  | 'unsupported_header'
  | 'expired'
  | 'not_yet_valid'
  | 'issued_in_future'
  | 'missing_claim'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'wrong_type'
  | 'revoked';

/**
 * A refused token. `reason` is safe to log; the token itself is never kept.
 *
 * @example
 * ```ts
 * if (err instanceof TokenError && err.reason === 'expired') await client.refresh();
 * ```
 */
export class TokenError extends PortcullisError {
  readonly reason: TokenFailureReason;

  constructor(reason: TokenFailureReason, message = `token refused: ${reason}`, options?: { cause?: unknown }) {
    super('invalid_token', message, options);
    this.name = 'TokenError';
    this.reason = reason;
  }
}

/**
 * A setting that stops start-up. `key` is the full setting path, e.g.
 * `svc:security:password:work-factor`.
 *
 * @example
 * ```ts
 * new ConfigError('svc:security:mode', 'must be "jwt"');
 * ```
 */
export class ConfigError extends PortcullisError {
  readonly key: string;

  constructor(key: string, problem: string) {
    super('config_invalid', `invalid setting ${key}: ${problem}`);
    this.name = 'ConfigError';
    this.key = key;
  }
}
